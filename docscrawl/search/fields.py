"""What the index stores per chunk, beyond its JSON line: the FTS fields, the terms
ranking reads, and the text its vector is computed from.

A page's own words are what ranking needs; the words a site repeats on every page are
noise there. Titles carry the site's name ("Jobs — Scrapy 2.8 documentation",
"Get Started — pytest documentation"): the segments that most titles share
(`SiteAffixes`, learned from the site's own titles) are left out of the title field and
of the heading terms, so "pytest" in a query does not match every title.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from functools import lru_cache
from typing import Any, NamedTuple

from docscrawl.search.tokenize import encode, index_text, stem, terms

# A static embedding averages its tokens: the title, headings and opening lines say what
# a chunk is about; more text costs CPU and blurs the vector.
EMBED_CHARS = 600
# Markdown link destinations: URLs are not what a chunk says (its anchor text is).
LINK_DESTINATION = re.compile(r"\]\([^)\s]*(?:\s+\"[^\"]*\")?\)")
# Headings inside a chunk's Markdown (a chunk may hold several short sections).
_MD_HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t#]*$", re.M)
# How titles join a page's name to the site's: "Page — Site", "Page | Site", "Site: Page".
_TITLE_SEPARATOR = re.compile(r"\s+[—–|·»:-]\s+|\s*::\s*")
# Long chunks are indexed as windows of about this many characters (see `_fts_rows`).
WINDOW_CHARS = 1500
MAX_WINDOWS = 256       # windows of one chunk; each its own FTS row (`fts_rowid`)
WINDOW_SLOTS = 1024
# A chunk's first window has the chunk's rowid as its FTS rowid, its further windows
# WINDOWS_BASE + chunk rowid * WINDOW_SLOTS + window. Most chunks are one window, so a
# term's doclist holds consecutive rowids, stored as one-byte deltas (chunk rowid *
# WINDOW_SLOTS for every window took two: fts_data 514 -> 442 B a chunk on go-spec).
WINDOWS_BASE = 1 << 48
AFFIX_SHARE = 0.4       # a title segment in this share of pages (or more) is the site's
AFFIX_MIN_PAGES = 5


def fts_rowid(chunk: int, window: int) -> int:
    """The FTS rowid of window `window` of chunk rowid `chunk`."""
    return chunk if window == 0 else WINDOWS_BASE + chunk * WINDOW_SLOTS + window


def chunk_of(fts_rowid: int) -> int:
    """The chunk rowid of an FTS rowid (`fts_rowid`'s inverse, whatever the window)."""
    return fts_rowid if fts_rowid < WINDOWS_BASE else (fts_rowid - WINDOWS_BASE) // WINDOW_SLOTS


# `chunk_of` in SQL, over the FTS table's rowid
CHUNK_OF_SQL = (f"CASE WHEN rowid < {WINDOWS_BASE} THEN rowid"
                f" ELSE (rowid - {WINDOWS_BASE}) / {WINDOW_SLOTS} END")


def chunks_rows_filter(chunks: list[int]) -> tuple[str, list[int]]:
    """An SQL condition on the FTS table's rowid, true for the rows of `chunks` (chunk
    rowids), and its parameters: each chunk's first window, and its further ones."""
    condition = " OR ".join(["rowid = ? OR rowid BETWEEN ? AND ?"] * len(chunks))
    return condition, [bound for chunk in chunks for bound in (
        chunk, fts_rowid(chunk, 1), fts_rowid(chunk, WINDOW_SLOTS - 1))]


class SiteAffixes:
    """The title segments a site repeats on most pages (its name, version, "documentation")."""

    def __init__(self, segments: Iterable[str] = ()) -> None:
        self.segments = frozenset(segments)

    @classmethod
    def learn(cls, titles: Iterable[str]) -> SiteAffixes:
        counts: Counter[str] = Counter()
        pages = 0
        for title in titles:
            pages += 1
            counts.update(set(_segments(title)))
        if pages < AFFIX_MIN_PAGES:
            return cls()
        return cls(s for s, n in counts.items() if n >= AFFIX_SHARE * pages and n > 1)

    def without(self, title: str) -> str:
        """The title without the site's segments (the whole title when nothing is left)."""
        if not self.segments:
            return title
        kept = [s for s in _segments(title) if s not in self.segments]
        return " — ".join(kept) if kept else title


def _segments(title: str) -> list[str]:
    return [s.strip() for s in _TITLE_SEPARATOR.split(title) if s.strip()]


def version_token(version: str | None) -> str:
    """The FTS term a chunk's version is stored as (`ver_none` encoded when unversioned)."""
    return encode("ver_" + (version.lower() if version else "none"))


def _headings(record: dict[str, Any]) -> list[str]:
    """The chunk's heading path, the headings inside it, and its sections' paths."""
    meta = record.get("metadata") or {}
    found = [str(h) for h in meta.get("heading_path") or []]
    for section in meta.get("sections") or ():
        if isinstance(section, dict):
            found += [str(h) for h in section.get("heading_path") or []]
    found += [h.strip("`*_ ") for h in _MD_HEADING.findall(str(record.get("markdown") or ""))]
    return list(dict.fromkeys(found))


def windows(body: str, size: int = WINDOW_CHARS) -> list[str]:
    """A long body cut at line ends (at spaces inside a longer line) into windows of
    about `size` characters, at most MAX_WINDOWS (the last one keeps the rest)."""
    if len(body) <= size * 3 // 2:
        return [body]
    pieces: list[str] = []
    for line in body.splitlines(keepends=True):
        while len(line) > size:
            cut = line.rfind(" ", size // 2, size)
            cut = size if cut < 0 else cut
            pieces.append(line[:cut])
            line = line[cut:]
        pieces.append(line)
    found: list[str] = []
    current = ""
    for piece in pieces:
        if current and len(current) + len(piece) > size and len(found) < MAX_WINDOWS - 1:
            found.append(current)
            current = ""
        current += piece
    return [*found, current] if current else found


# `region` rank column of a chunk inside a back-of-book index (`sitevocab`): never an answer
SITE_INDEX = "site_index"


class Vocab(NamedTuple):
    """What the site's own indexes and summary tables say of a chunk (`sitevocab`)."""
    text: str = ""           # the entries pointing at it, one a line, capped
    site_index: bool = False  # the chunk is part of an index itself


class IndexFields(NamedTuple):
    """What the index stores for a chunk besides its JSON line, worked out in one pass."""
    rank: tuple[str, int, str, str]               # see `_rank_columns`
    rows: list[tuple[str, str, str, str, str]]    # see `_fts_rows`
    embed: str                                    # see `_embed_text`
    vocab: str                                    # the `vocab` table's terms ("": no row)


NO_VOCAB = Vocab()


def index_fields(record: dict[str, Any], affixes: SiteAffixes,
                 vocab: Vocab = NO_VOCAB) -> IndexFields:
    """The rank columns, FTS rows and embedding text of one chunk record."""
    meta = record.get("metadata") or {}
    headings = _headings(record)
    body = LINK_DESTINATION.sub("]", str(record.get("markdown") or ""))
    rank = _rank_columns(record, meta, headings, affixes)
    if vocab.site_index:
        rank = (*rank[:2], SITE_INDEX, rank[3])
    return IndexFields(rank, _fts_rows(meta, headings, body, affixes),
                       _embed_text(meta, body), index_text(vocab.text) if vocab.text else "")


def _fts_rows(meta: dict[str, Any], headings: list[str], body: str, affixes: SiteAffixes,
              ) -> list[tuple[str, str, str, str, str]]:
    """The FTS rows of a chunk, one per window of its body: version token, title,
    headings and breadcrumbs, inbound anchor text and container labels, body (link
    destinations left out). bm25 scores a passage of a long chunk (an option list, a
    reference table) as it would a short chunk, instead of diluting it in the whole."""
    headings = headings + [str(c) for c in meta.get("breadcrumbs") or []]
    anchors = []
    for link in meta.get("inbound_links") or ():
        if isinstance(link, dict):
            anchors += [str(link.get("anchor_text") or ""), str(link.get("container_label") or "")]
    context = (version_token(meta.get("version")),
               index_text(affixes.without(str(meta.get("title") or ""))),
               index_text(" \n ".join(headings)), index_text(" \n ".join(anchors)))
    return [(*context, index_text(window)) for window in windows(body)]


def _rank_columns(record: dict[str, Any], meta: dict[str, Any], headings: list[str],
                  affixes: SiteAffixes) -> tuple[str, int, str, str]:
    """What ranking reads for every candidate, kept apart from the JSON line: the stemmed
    terms of the title and headings, code, region, and the section the chunk belongs to."""
    title = str(meta.get("title") or "")
    path = [str(h) for h in meta.get("heading_path") or []]
    source = str(meta.get("source_url") or "")
    anchor = meta.get("anchor") or (source.split("#", 1)[1] if "#" in source else "")
    section = f"{meta.get('canonical_url')}#{anchor or ' > '.join(path)}"
    heading_terms = frozenset().union(*map(_stemmed_terms, [affixes.without(title), *headings]))
    return (" ".join(sorted(heading_terms)), _code_level(record),
            str(meta.get("region") or "main_content"), section)


@lru_cache(maxsize=1 << 15)
def _stemmed_terms(text: str) -> frozenset[str]:
    """The stemmed terms of one title or heading (a page's chunks repeat them)."""
    return frozenset(stem(t) for t in terms(text))


_FENCE = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)
LISTING_SHARE = 0.8     # a chunk this much inside code fences is a listing


def _code_level(record: dict[str, Any]) -> int:
    """0: no code; 1: code; 2: a listing (a source view, a long example), nearly all code."""
    meta = record.get("metadata") or {}
    if not meta.get("has_code"):
        return 0
    markdown = str(record.get("markdown") or "")
    fenced = sum(len(m.group()) for m in _FENCE.finditer(markdown))
    return 2 if markdown and fenced >= LISTING_SHARE * len(markdown) else 1


def _embed_text(meta: dict[str, Any], body: str) -> str:
    """What a chunk's vector is computed from: its context label and the start of it."""
    head = " > ".join([str(meta.get("title") or ""), *map(str, meta.get("heading_path") or [])])
    return head + "\n" + body[:EMBED_CHARS]
