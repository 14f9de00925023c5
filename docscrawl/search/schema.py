"""The search index's tables, created in one place (`create_tables`).

Tables: `chunks` (one row per chunk: its id's 8-byte key (`rawline.chunk_key`), where its
JSON line is in chunks.jsonl and the line's CRC-32 (`seekjsonl`: the line is read there),
its FTS rows, compressed (`store`), version, page (a `urls` id), section anchor, flags;
its vector is in the vector files only, `vectors`),
`urls` (each page URL the chunks name, once: a chunk holds its small id; the view
`chunk_pages` gives a chunk's `page_url` and its `section_key`, the page URL and anchor),
`pages` (canonical URL, byte offset of its line in pages.jsonl, aggregate_of),
`aliases` (observed URL -> canonical), `fts` (FTS5 over code-aware terms: version token,
title, heading path and breadcrumbs, inbound anchor text, body; one row per
window of a long chunk, rowid `fields.fts_rowid`: the chunk's rowid for its first
window), `vocab` (FTS5: what the site's indexes and summary tables call a chunk,
`sitevocab`; rowid = chunk rowid; a table of its own so its words do not change the
rarity of the chunks' own words),
`sections` (a section's text signature and its row in `search.sections.npy`,
`vectors.embed_sections`) and
`meta` (with where the members of chunks.jsonl.gz and pages.jsonl.gz start). Both FTS
tables are contentless (`content=''`): ranking reads only their index, and a chunk's text
is read from its line in chunks.jsonl.

A `SCHEMA` change (or an embedder change) drops and rebuilds them.
"""

from __future__ import annotations

import sqlite3

SCHEMA = 16  # 11: lines compressed, FTS contentless (docs/performance.md, the search index);
# 12: Javadoc's index-all read as an index (its entries never answers);
# 13: the chunk vector stored once, in the vector files (no `chunks.vec`, no coarse
# file); a chunk's id as an 8-byte key, unindexed (`rawline.chunk_key`);
# 14: a chunk's page URL once per page (`urls`), its section key as the anchor after it;
# pages and aliases without rowid; the line dictionary compressed; the main-content region
# as NULL; the chunk vectors int8 with a scale per row (`vectors.quantize`); a section's
# vector stored once, in `search.sections.npy` (`sections.row` its row; no `vec`);
# 15: a chunk's line not stored, read from chunks.jsonl at its offset (`line_at`,
# checked by `line_crc`); the FTS rows compressed alone, with a dictionary of rows;
# 16: a chunk's first FTS window at the chunk's rowid (`fields.fts_rowid`: dense rowids)
# bm25 weights per FTS column: version token, title, headings, anchors, body.
BM25_WEIGHTS = (0.0, 2.0, 3.0, 1.5, 1.0)
TABLES = frozenset({"fts", "vocab", "chunks", "urls", "pages", "aliases", "sections", "meta"})
VIEWS = frozenset({"chunk_pages"})
# a chunk's `region` when it is this: stored as NULL (nearly every chunk's), read back by
# `chunk_pages`
MAIN_REGION = "main_content"


def create_tables(db: sqlite3.Connection) -> None:
    """The index's tables, empty (the caller drops the old ones and records `SCHEMA`).
    One statement at a time, not `executescript` (which commits first): a rebuild that
    starts inside an update's transaction stays in it."""
    script = f"""
        CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT) WITHOUT ROWID;
        CREATE TABLE chunks(rowid INTEGER PRIMARY KEY, chunk_key INTEGER,
            page INTEGER, version TEXT, inbound_sig TEXT, rows BLOB, line_at INTEGER,
            line_crc INTEGER,
            heading_terms TEXT, has_code INTEGER, region TEXT, anchor TEXT);
        CREATE TABLE urls(id INTEGER PRIMARY KEY, url TEXT UNIQUE);
        CREATE VIEW chunk_pages AS SELECT c.rowid AS rowid, c.version AS version,
            c.heading_terms AS heading_terms, c.has_code AS has_code,
            ifnull(c.region, '{MAIN_REGION}') AS region,
            u.url AS page_url, ifnull(u.url, '') || c.anchor AS section_key
            FROM chunks c LEFT JOIN urls u ON u.id=c.page;
        CREATE TABLE pages(url TEXT PRIMARY KEY, offset INTEGER, version TEXT,
            title TEXT, aggregate_of TEXT) WITHOUT ROWID;
        CREATE TABLE aliases(url TEXT PRIMARY KEY, canonical TEXT) WITHOUT ROWID;
        CREATE TABLE sections(section_key TEXT PRIMARY KEY, sig TEXT, row INTEGER)
            WITHOUT ROWID;
        CREATE VIRTUAL TABLE fts USING fts5(ver, title, headings, anchors, body,
            content='', tokenize="porter unicode61 remove_diacritics 2");
        CREATE VIRTUAL TABLE vocab USING fts5(ver, terms,
            content='', tokenize="porter unicode61 remove_diacritics 2");
        INSERT INTO fts(fts, rank) VALUES('rank', 'bm25({", ".join(map(str, BM25_WEIGHTS))})')
    """
    for statement in script.split(";"):
        db.execute(statement)
