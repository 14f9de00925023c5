"""The site's link graph turned around: the inbound links of each page and section
(`docscrawl.export.inbound` puts them on the chunks).

Every page record lists the links it holds (`links`: url, text, region, container label).
Turned around, they say how the rest of the site refers to a page and to each of its
sections: anchor text written by someone else, the "see also" in a tutorial, the sidebar
entry. A target (page, fragment) keeps the count of the links to it from other pages and
the best `cap`, ranked by how much the link says (prose and "see also" links before
navigation). One streaming pass over pages.jsonl: page identities, heading anchors and
links (`export.linkrows`; the links of the pages the crawl wrote itself are given as it
writes them, `LinkGraph.feed`, and not read again). Which chunk holds a section:
`page_owners`, page by page in the rewrite.

Everything the graph learns goes to a scratch SQLite database (`LinkGraph.db`), not to
memory: the graph grows with the site (on a 2,000-page generated site 46,000 link targets,
their heading anchors and 4,039 template blocks, about 90 MB as Python objects) and the
end of a crawl must not hold a copy of it. The database is a private temporary file
SQLite unlinks as it opens it, so a crawl killed here leaves nothing behind. The values it
keeps for itself (a target's ranked links, a page's heading anchors) are `marshal`led: only
this process reads them back, five to seven times faster than as JSON.
"""

from __future__ import annotations

import heapq
import itertools
import json
import logging
import marshal
import operator
import sqlite3
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urldefrag

from docscrawl.export.linkrows import (
    BlockRows,
    Blocks,
    LinkRow,
    page_lines,
    page_rows,
)
from docscrawl.export.templates import TemplateBlock
from docscrawl.jsonfields import field
from docscrawl.jsonl import text_lines

logger = logging.getLogger(__name__)

DEFAULT_CAP = 8
CACHE_KB = 8192  # the scratch database's page cache (and its sorter's memory)
# Its pages: at 10,000 pages the links table outgrows the cache many times over, and
# SQLite moves it (and sorts it) a page at a time: 16 KB pages instead of 4 KB cut the
# feeding and the end pass by a tenth (18.0 -> 16.3 CPU-s, a third of it the kernel's)
# with the same lines written (docs/performance.md).
PAGE_BYTES = 16384

_SCHEMA = """
PRAGMA page_size = {page_bytes};
PRAGMA journal_mode = OFF;
PRAGMA synchronous = OFF;
PRAGMA cache_size = -{cache_kb};
CREATE TABLE canon (url TEXT PRIMARY KEY, canonical TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE anchors (canonical TEXT PRIMARY KEY, paths BLOB NOT NULL) WITHOUT ROWID;
CREATE TABLE blocks (id TEXT PRIMARY KEY, links TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE links (url TEXT, fragment TEXT, source TEXT, text TEXT, score REAL,
                    label, region);
CREATE TABLE inbound (canonical TEXT, fragment TEXT, count INTEGER, best BLOB,
                      PRIMARY KEY (canonical, fragment)) WITHOUT ROWID;
CREATE TABLE fed (canonical TEXT);
CREATE TABLE chunk_paths (canonical TEXT, chunk_id TEXT, path TEXT);
CREATE INDEX chunk_paths_page ON chunk_paths (canonical);
CREATE TABLE owners (canonical TEXT, chunk_id TEXT, fragment TEXT);
CREATE INDEX owners_page ON owners (canonical);
"""

# One ranked inbound link: (score, -order, item); higher first, then the earlier one.
Ranked = tuple[float, int, dict[str, Any]]
_TARGET = operator.itemgetter(0, 1)  # a `rank` row's target: (page, fragment)


def rank_target(rows: Iterable[tuple[str, str, str, str, float, Any, Any, int]], cap: int
                ) -> tuple[int, list[Ranked]]:
    """The count and the best `cap` of the links to one target, given in the order the
    crawl's pages list them as `rank`'s query rows (target, fragment, source, text, score,
    label, region, order). A link whose (source, anchor text) was met before counts but is
    not ranked again; the first 4 × cap such pairs are remembered. (A million rows at
    10,000 pages: the loop reads each row's fields once, and compares with the heap's
    least as `(score, -order) > least[:2]` does, without making the tuples.)"""
    count, best, seen = 0, list[Ranked](), set[tuple[str, str]]()
    remember = 4 * cap
    for _target, _fragment, source, text, score, label, region, order in rows:
        count += 1
        dedup = (source, text.lower())
        if dedup in seen:
            continue
        if len(seen) < remember:
            seen.add(dedup)
        full = len(best) >= cap
        if full and (score < best[0][0] or (score == best[0][0] and -order <= best[0][1])):
            continue  # not above the heap's least
        ranked = (score, -order, {"url": source, "anchor_text": text,
                                  "container_label": label, "region": region})
        if full:
            heapq.heapreplace(best, ranked)
        else:
            heapq.heappush(best, ranked)
    return count, best


class LinkGraph:
    """The site's internal links, turned into inbound lists per page and section."""

    def __init__(self, *, cap: int = DEFAULT_CAP) -> None:
        self.cap = cap
        self.db = sqlite3.connect("", isolation_level=None)  # "": a private temp file
        self.db.executescript(_SCHEMA.format(cache_kb=CACHE_KB, page_bytes=PAGE_BYTES))
        self.db.execute("BEGIN")
        self.ranked = False
        self._page: tuple[str, dict[str, tuple[int, list[Ranked]]]] = ("", {})
        self._owners: tuple[str, dict[str, list[str]]] = ("", {})
        # `for_chunk`'s last answer, by (page, the page's targets the chunk names)
        self._chunk: tuple[tuple[str, tuple[str, ...]], tuple[list[dict[str, Any]], int]] = (
            ("", ()), ([], 0))
        self.fed = 0  # pages `feed` gave
        self._feed_rows = BlockRows({})

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> LinkGraph:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def add_identities(self, pages: Path) -> None:
        """Pass 1: every URL a page was seen under, and its heading anchors."""
        for line in page_lines(pages):
            self._add_identity(line)

    def add_links(self, pages: Path, templates: Mapping[str, list[dict[str, Any]]] | None = None
                  ) -> None:
        """Pass 2: every internal link from one page to another (its template blocks'
        links joined back from `templates`, in page order as `join_links` gives them:
        `export.templates`), stored in page order."""
        rows_of = BlockRows(templates)
        for line in page_lines(pages):
            self._add_page_links(line, rows_of)

    def add_run(self, run_dir: Path) -> None:
        """Both passes over a run directory's pages.jsonl, its template blocks joined, in
        one read of the file: what each pass stores does not depend on the other's. The
        links of pages `feed` gave are not read again when the file holds exactly those
        pages in that order (the links a page record holds do not change once written);
        otherwise the fed links are dropped and every line's are read."""
        pages = run_dir / "pages.jsonl"
        if self.fed:
            order = (row[0] for row in self.db.execute(
                "SELECT canonical FROM fed ORDER BY rowid").fetchall())
            same = True
            for line in page_lines(pages):
                canonical = self._add_identity(line)
                if canonical is not None and same:
                    same = next(order, None) == canonical
            if same and next(order, None) is None:
                return
            self.db.execute("DELETE FROM links")
            self.fed = 0
            self.add_links(pages, Blocks(self.db, run_dir))
            return
        rows_of = BlockRows(Blocks(self.db, run_dir))
        for line in page_lines(pages):
            self._add_identity(line)
            self._add_page_links(line, rows_of)

    def feed(self, source: str, links: list[dict[str, Any]], blocks: list[TemplateBlock],
             offsets: list[int]) -> None:
        """One page's links as the crawl writes its record (`links`: its own, `blocks`
        and `offsets`: its template blocks, as `page_records` splits them), stored now:
        the end of the crawl then need not decode them again from pages.jsonl (`add_run`
        checks that the file holds the pages fed, in order). The rows are those
        `add_links` makes of the written line."""
        self._feed_rows.templates = {block.template_id: block.links for block in blocks}
        ids = [block.template_id for block in blocks]
        self._insert(source, page_rows(links, ids, offsets, self._feed_rows))
        self.db.execute("INSERT INTO fed VALUES (?)", (source,))
        self.fed += 1

    def _add_identity(self, line: str) -> str | None:
        """One page line's URLs and heading anchors (`add_identities`); its canonical URL,
        None for a line without one."""
        canonical = field(line, "canonical_url")
        if not isinstance(canonical, str):
            return None
        db = self.db
        db.execute("INSERT OR REPLACE INTO canon VALUES (?, ?)", (canonical, canonical))
        db.executemany("INSERT OR IGNORE INTO canon VALUES (?, ?)",
                       [(urldefrag(str(url))[0], canonical)
                        for url in field(line, "observed_urls") or ()])
        anchors = {str(h["anchor"]): list(h.get("path") or [])
                   for h in field(line, "headings") or ()
                   if isinstance(h, dict) and h.get("anchor")}
        if anchors:
            db.execute("INSERT OR REPLACE INTO anchors VALUES (?, ?)",
                       (canonical, marshal.dumps(anchors)))
        return canonical

    def _add_page_links(self, line: str, rows_of: BlockRows) -> None:
        """One page line's internal links to other pages (`add_links`)."""
        source = field(line, "canonical_url")
        links = field(line, "links")
        if not isinstance(source, str) or not isinstance(links, list):
            return
        ids = field(line, "template_ids") if rows_of.templates is not None else None
        offsets = field(line, "template_offsets") if ids else None
        self._insert(source, page_rows(links, ids or [], offsets, rows_of))

    def _insert(self, source: str, page_rows: list[LinkRow]) -> None:
        self.db.executemany("INSERT INTO links VALUES (?, ?, ?, ?, ?, ?, ?)",
                            [(url, fragment, source, text, score, label, region)
                             for url, fragment, text, score, label, region in page_rows
                             if url != source])  # the page's own sections: `rank` drops them

    def rank(self) -> int:
        """Turn the stored links into each target's count and best `cap` (links to a page
        under any URL it was seen under; none from the page itself); returns the number
        of targets. Links stay in the order they were stored, which breaks ties."""
        rows = self.db.execute(
            "SELECT c.canonical, l.fragment, l.source, l.text, l.score, l.label, l.region,"
            " l.rowid FROM links l JOIN canon c ON c.url = l.url"
            " WHERE c.canonical != l.source ORDER BY c.canonical, l.fragment, l.rowid")
        targets = 0

        def ranked() -> Iterator[tuple[str, str, int, bytes]]:
            nonlocal targets
            for (canonical, fragment), group in itertools.groupby(rows, _TARGET):
                count, best = rank_target(group, self.cap)
                targets += 1
                yield canonical, fragment, count, marshal.dumps(best)
        # a second cursor inserts while `rows` is read: the rows come from `links`, the
        # inserts go to `inbound`
        self.db.executemany("INSERT INTO inbound VALUES (?, ?, ?, ?)", ranked())
        self.db.execute("DELETE FROM links")
        self.ranked = True
        return targets

    def targets(self) -> Iterator[tuple[tuple[str, str], int, list[Ranked]]]:
        """Every target (page, fragment) with its count and best links (after `rank`)."""
        for canonical, fragment, count, best in self.db.execute(
                "SELECT canonical, fragment, count, best FROM inbound"):
            yield (canonical, fragment), count, marshal.loads(best)

    def _page_targets(self, canonical: str) -> dict[str, tuple[int, list[Ranked]]]:
        """One page's targets by fragment (the last page asked for is kept: a page's
        chunks come one after another)."""
        if self._page[0] != canonical or not canonical:
            self._page = (canonical, {
                fragment: (count, marshal.loads(best))
                for fragment, count, best in self.db.execute(
                    "SELECT fragment, count, best FROM inbound WHERE canonical = ?",
                    (canonical,))})
        return self._page[1]

    def for_chunk(self, canonical: str, anchors: list[str]) -> tuple[list[dict[str, Any]], int]:
        """The ranked, capped inbound links of one chunk and the count of them all:
        links to its sections (anchors the chunk holds) first, then links to its page.

        Most chunks of a page hold no linked section and get the page's links alone: the
        answer depends only on which of the page's targets the chunk names, so the last
        one is kept, and given again (the same list: not to be changed) for the same
        targets of the same page."""
        targets = self._page_targets(canonical)
        named = tuple(fragment for fragment in [a for a in anchors if a] + [""]
                      if fragment in targets)
        if self._chunk[0] == (canonical, named):
            return self._chunk[1]
        ranked: list[Ranked] = []
        count = 0
        for fragment in named:
            bonus = 1.0 if fragment else 0.0
            entry = targets[fragment]
            count += entry[0]
            ranked.extend((score + bonus, order, item) for score, order, item in entry[1])
        ranked.sort(key=lambda r: (r[0], r[1]), reverse=True)
        links, seen = [], set()
        for _score, _order, item in ranked:
            dedup = (item["url"], item["anchor_text"].lower())
            if dedup not in seen:
                seen.add(dedup)
                links.append(item)
        answer = (links[: self.cap], count)
        self._chunk = ((canonical, named), answer)
        return answer

    def fragment_owners(self, chunks: Path) -> None:
        """Record which chunk holds each linked fragment that names a heading inside it
        rather than its own anchor (a subsection merged into its parent's chunk): the
        chunk whose heading path is the longest prefix of the heading's (`owned`)."""
        db = self.db
        rows = ((meta["canonical_url"], str(field(line, "id")),
                 json.dumps(list(meta.get("heading_path") or [])))
                for line in text_lines(chunks)
                if isinstance(meta := field(line, "metadata"), dict)
                and isinstance(meta.get("canonical_url"), str))
        db.executemany("INSERT INTO chunk_paths VALUES (?, ?, ?)", rows)
        for (canonical,) in db.execute("SELECT DISTINCT canonical FROM inbound"
                                       " WHERE fragment != '' ORDER BY canonical"):
            page_chunks = [(json.loads(path), chunk_id) for chunk_id, path in db.execute(
                "SELECT chunk_id, path FROM chunk_paths WHERE canonical = ? ORDER BY rowid",
                (canonical,))]
            db.executemany("INSERT INTO owners VALUES (?, ?, ?)", [
                (canonical, chunk_id, fragment) for chunk_id, fragments
                in self.page_owners(canonical, page_chunks).items() for fragment in fragments])

    def page_owners(self, canonical: str, page_chunks: list[tuple[list[str], str]]
                    ) -> dict[str, list[str]]:
        """Chunk id -> the linked fragments of the page `canonical` it holds, given the
        page's chunks in file order as (heading path, chunk id) (`fragment_owners`' rule;
        `inbound` gives it one page's chunks as they come)."""
        fragments = [row[0] for row in self.db.execute(
            "SELECT fragment FROM inbound WHERE canonical = ? AND fragment != ''"
            " ORDER BY fragment", (canonical,))]
        row = self.db.execute("SELECT paths FROM anchors WHERE canonical = ?",
                              (canonical,)).fetchone() if fragments else None
        paths = marshal.loads(row[0]) if row else {}
        owned: dict[str, list[str]] = {}
        for fragment in fragments:
            path = paths.get(fragment)
            owner = _section_owner(page_chunks, path) if path is not None else None
            if owner is not None:
                owned.setdefault(page_chunks[owner][1], []).append(fragment)
        return owned

    def owned(self, canonical: str, chunk_id: str) -> list[str]:
        """The fragments `fragment_owners` gave to one chunk of the page `canonical` (the
        page's are read at once, and kept while its chunks come)."""
        if self._owners[0] != canonical or not canonical:
            by_chunk: dict[str, list[str]] = {}
            for chunk, fragment in self.db.execute(
                    "SELECT chunk_id, fragment FROM owners WHERE canonical = ? ORDER BY rowid",
                    (canonical,)):
                by_chunk.setdefault(chunk, []).append(fragment)
            self._owners = (canonical, by_chunk)
        return self._owners[1].get(chunk_id, [])


def _section_owner(chunks: list[tuple[list[str], str]], path: list[str]) -> int | None:
    """Index of the chunk whose heading path is the longest prefix of `path`."""
    best, best_len = None, -1
    for index, (heading_path, _) in enumerate(chunks):
        n = len(heading_path)
        if n > best_len and path[:n] == heading_path:
            best, best_len = index, n
    return best
