"""The chunk rows of the index: which chunks of chunks.jsonl were added, relinked (their
inbound links or site vocabulary changed), moved (their line is elsewhere in the file, or
differs) or went away, and writing them: the `chunks` row (where the line is, compressed
FTS rows, rank columns), its FTS rows and its `vocab` row; its vector goes to
`index.fresh` until the vector files are written (`docscrawl.search.vectors`)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from docscrawl.search.fields import Vocab, fts_rowid, index_fields
from docscrawl.search.rawline import chunk_key, inbound_sig, leading_id, vocab_sig
from docscrawl.search.schema import MAIN_REGION
from docscrawl.search.store import rows_text
from docscrawl.search.vectors import embed_sections, quantize, report_embedded
from docscrawl.seekjsonl import SeekPoints

if TYPE_CHECKING:
    from docscrawl.search.chunklines import ChunkLine
    from docscrawl.search.index import SearchIndex

BATCH = 512


@dataclass
class Built:
    """What a build or update did."""
    added: int = 0
    deleted: int = 0
    relinked: int = 0
    total: int = 0
    full: bool = False


def sync_chunks(index: SearchIndex) -> Built:
    """Write the chunks that appeared or were relinked, delete those that went away,
    move the others to where their line is now: one pass over chunks.jsonl's ids, lines
    parsed only for the chunks written."""
    db = index.db
    known = {key: (rowid, sig, at, crc) for key, rowid, sig, at, crc in db.execute(
        "SELECT chunk_key, rowid, inbound_sig, line_at, line_crc FROM chunks")}
    built = Built()
    seen: set[int] = set()
    pending: list[Pending] = []
    moved: list[tuple[int, int, int]] = []  # (offset, CRC, row id)
    points = SeekPoints()
    for found in index.chunk_lines(points):
        chunk_id = leading_id(found.text)
        key = chunk_key(chunk_id) if chunk_id is not None else None
        if key is None or key in seen:
            continue
        seen.add(key)
        sig = inbound_sig(found.text) + vocab_sig(index.vocab.get(str(chunk_id)))
        old = known.get(key)
        if old is None:
            pending.append((found, sig, None))
            built.added += 1
        elif old[1] != sig:
            pending.append((found, sig, old[0]))
            built.relinked += 1
        elif old[2:] != (found.at, found.crc):
            moved.append((found.at, found.crc, old[0]))
        if len(pending) >= BATCH:
            write_chunks(index, pending)
            pending = []
    write_chunks(index, pending)
    db.executemany("UPDATE chunks SET line_at=?, line_crc=? WHERE rowid=?", moved)
    index.set_meta("chunk_members", json.dumps(points.to_json()))
    gone = [rowid for key, (rowid, *_) in known.items() if key not in seen]
    for rowid in gone:
        delete_chunk(index, rowid)
    if gone:
        db.execute("DELETE FROM sections WHERE section_key NOT IN "
                   "(SELECT section_key FROM chunk_pages)")
        db.execute("DELETE FROM urls WHERE id NOT IN "
                   "(SELECT page FROM chunks WHERE page IS NOT NULL)")
    built.deleted = len(gone)
    built.total = len(seen)
    return built


def delete_chunk(index: SearchIndex, rowid: int) -> None:
    """A chunk's row and its FTS rows (a contentless table deletes a row given the
    values it was indexed with: the ones `write_chunks` kept)."""
    rows, vocab = index.fts_values(rowid)
    index.db.executemany(
        "INSERT INTO fts(fts, rowid, ver, title, headings, anchors, body) "
        "VALUES('delete',?,?,?,?,?,?)", [(fts_rowid(rowid, i), *r) for i, r in enumerate(rows)])
    if vocab:
        index.db.execute("INSERT INTO vocab(vocab, rowid, ver, terms) "
                         "VALUES('delete',?,?,?)", (rowid, rows[0][0], vocab))
    index.db.execute("DELETE FROM chunks WHERE rowid=?", (rowid,))


Pending = tuple["ChunkLine", str, int | None]  # (line, inbound signature, old row)


def write_chunks(index: SearchIndex, pending: list[Pending]) -> None:
    if not pending:
        return
    records = []
    for line, sig, old in pending:
        try:
            record = json.loads(line.text)
        except ValueError:
            continue
        vocab = index.vocab.get(str(record.get("id"))) or Vocab()
        records.append((record, line, sig, old, index_fields(record, index.affixes, vocab)))
    vectors = None
    if index.embedder is not None:
        vectors = quantize(index.embedder.embed([fields.embed for *_, fields in records]))
        before = index.embedded
        index.embedded += len(records)
        report_embedded(index, index.embedder, "chunks", before, index.embedded)
    if index.sections is not None:
        embed_sections(index, records)
    texts = [rows_text(fields.rows, fields.vocab) for *_, fields in records]
    codec = index.codec(texts)
    pages: dict[str, int] = {}
    for i, (record, line, sig, old, fields) in enumerate(records):
        meta = record.get("metadata") or {}
        if old is not None:
            delete_chunk(index, old)
        page, anchor = page_and_anchor(index, pages, meta.get("canonical_url"), fields.rank[3])
        heading_terms, has_code, region = fields.rank[:3]
        cur = index.db.execute(
            "INSERT INTO chunks(chunk_key, page, version, inbound_sig, rows, line_at, "
            "line_crc, heading_terms, has_code, region, anchor) VALUES(?,?,?,?,?,?,?,?,?,?,?)",
            (chunk_key(str(record.get("id"))), page, meta.get("version"), sig,
             codec.pack(texts[i]), line.at, line.crc, heading_terms, has_code,
             None if region == MAIN_REGION else region, anchor))
        if vectors is not None:
            index.fresh[int(cur.lastrowid or 0)] = (vectors[0][i], vectors[1][i])
        chunk = int(cur.lastrowid or 0)
        index.db.executemany(
            "INSERT INTO fts(rowid, ver, title, headings, anchors, body) "
            "VALUES(?,?,?,?,?,?)",
            [(fts_rowid(chunk, i), *row) for i, row in enumerate(fields.rows)])
        if fields.vocab:
            index.db.execute("INSERT INTO vocab(rowid, ver, terms) VALUES(?,?,?)",
                            (cur.lastrowid, fields.rows[0][0], fields.vocab))


def page_and_anchor(index: SearchIndex, pages: dict[str, int], url: object,
                    section: str) -> tuple[int | None, str]:
    """A chunk's page as its `urls` id (added when new; `pages` caches them) and its
    section key without that URL (the `chunk_pages` view joins them back): each page URL
    is stored once, not twice per chunk. A chunk without a URL keeps its whole key."""
    if not isinstance(url, str) or not section.startswith(url):
        return None, section
    page = pages.get(url)
    if page is None:
        index.db.execute("INSERT OR IGNORE INTO urls(url) VALUES(?)", (url,))
        page = int(index.db.execute("SELECT id FROM urls WHERE url=?", (url,)).fetchone()[0])
        pages[url] = page
    return page, section[len(url):]
