"""The site's link graph turned around: the inbound links of each page and section
(`docscrawl.export.inbound` puts them on the chunks).

Every page record lists the links it holds (`links`: url, text, region, container label).
Turned around, they say how the rest of the site refers to a page and to each of its
sections: anchor text written by someone else, the "see also" in a tutorial, the sidebar
entry. A target (page, fragment) keeps the count of the links to it from other pages and
the best `cap`, ranked by how much the link says (prose and "see also" links before
navigation). Two streaming passes over pages.jsonl (page identities and heading anchors,
then links); which chunk holds a section: `page_owners`, page by page in the rewrite.

Everything the graph learns goes to a scratch SQLite database (`LinkGraph.db`), not to
memory: the graph grows with the site (on a 2,000-page generated site 46,000 link targets,
their heading anchors and 4,039 template blocks, about 90 MB as Python objects) and the
end of a crawl must not hold a copy of it. The database is a private temporary file
SQLite unlinks as it opens it, so a crawl killed here leaves nothing behind.
"""

from __future__ import annotations

import heapq
import itertools
import json
import logging
import sqlite3
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urldefrag

from docscrawl.export.templates import TEMPLATES_FILE, template_blocks
from docscrawl.jsonl import resolve_jsonl

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
# The link fields the graph reads (`add_links`, `link_score`; `position` orders a page's
# links when its template blocks are joined back).
GRAPH_LINK_FIELDS = ("url", "text", "region", "container", "container_label", "target",
                     "position")
CACHE_KB = 8192  # the scratch database's page cache (and its sorter's memory)
BLOCKS_CACHED = 256  # decoded template blocks kept (a section's pages share a sidebar)

_SCHEMA = """
PRAGMA journal_mode = OFF;
PRAGMA synchronous = OFF;
PRAGMA cache_size = -{cache_kb};
CREATE TABLE canon (url TEXT PRIMARY KEY, canonical TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE anchors (canonical TEXT PRIMARY KEY, paths TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE blocks (id TEXT PRIMARY KEY, links TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE links (url TEXT, fragment TEXT, source TEXT, text TEXT, score REAL,
                    label, region);
CREATE TABLE inbound (canonical TEXT, fragment TEXT, count INTEGER, best TEXT,
                      PRIMARY KEY (canonical, fragment)) WITHOUT ROWID;
CREATE TABLE chunk_paths (canonical TEXT, chunk_id TEXT, path TEXT);
CREATE INDEX chunk_paths_page ON chunk_paths (canonical);
CREATE TABLE owners (canonical TEXT, chunk_id TEXT, fragment TEXT);
CREATE INDEX owners_page ON owners (canonical);
"""

# One ranked inbound link: (score, -order, item); higher first, then the earlier one.
Ranked = tuple[float, int, dict[str, Any]]


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


# An internal link as the graph stores it, less its source page:
# (url, fragment, anchor text, score, container label, region)
_LinkRow = tuple[str, str, str, float, Any, Any]


def _link_row(link: Any) -> _LinkRow | None:
    """`link`'s row, None when it is not an internal link."""
    if not isinstance(link, dict) or link.get("target") != "internal":
        return None
    url, fragment = _defrag(str(link.get("url") or ""))
    return (url, fragment, " ".join(str(link.get("text") or "").split()), link_score(link),
            _scalar(link.get("container_label")), _scalar(link.get("region")))


def _defrag(url: str) -> tuple[str, str]:
    """`urldefrag`'s answer, cut at the first `#` as it does: parsing and unparsing a plain
    absolute http(s) URL (no query or parameters, printable ASCII) gives it back as is."""
    base, mark, fragment = url.partition("#")
    if not mark:
        return url, ""
    if (base.startswith(("https://", "http://")) and base.isascii() and base.isprintable()
            and not any(c in base for c in " ?;[")):
        return base, fragment
    defragged = urldefrag(url)
    return defragged.url, defragged.fragment


def _scalar(value: Any) -> Any:
    """A link's label or region as SQLite keeps it (they are strings or null)."""
    return value if value is None or isinstance(value, (str, int, float)) else str(value)


def rank_target(rows: Iterable[tuple[str, str, float, Any, Any, int]], cap: int
                ) -> tuple[int, list[Ranked]]:
    """The count and the best `cap` of the links to one target, given in the order the
    crawl's pages list them as (source, text, score, label, region, order). A link whose
    (source, anchor text) was met before counts but is not ranked again; the first
    4 × cap such pairs are remembered."""
    count, best, seen = 0, list[Ranked](), set[tuple[str, str]]()
    for source, text, score, label, region, order in rows:
        count += 1
        dedup = (source, text.lower())
        if dedup in seen:
            continue
        if len(seen) < 4 * cap:
            seen.add(dedup)
        if len(best) < cap or (score, -order) > best[0][:2]:
            item = {"url": source, "anchor_text": text, "container_label": label,
                    "region": region}
            if len(best) < cap:
                heapq.heappush(best, (score, -order, item))
            else:
                heapq.heapreplace(best, (score, -order, item))
    return count, best


class _Blocks(Mapping[str, list[dict[str, Any]]]):
    """templates.jsonl's blocks in the graph's database (the graph's link fields only),
    the last used decoded."""

    def __init__(self, db: sqlite3.Connection, run_dir: Path) -> None:
        self.db = db
        self._cache: OrderedDict[str, list[dict[str, Any]]] = OrderedDict()
        rows = ((template_id, json.dumps([_slim(link) for link in links]))
                for template_id, links in template_blocks(resolve_jsonl(run_dir /
                                                                         TEMPLATES_FILE)))
        db.executemany("INSERT OR REPLACE INTO blocks VALUES (?, ?)", rows)

    def __getitem__(self, key: str) -> list[dict[str, Any]]:
        links = self._cache.get(key)
        if links is not None:
            self._cache.move_to_end(key)
            return links
        row = self.db.execute("SELECT links FROM blocks WHERE id = ?", (key,)).fetchone()
        if row is None:
            raise KeyError(key)
        links = self._cache[key] = json.loads(row[0])
        if len(self._cache) > BLOCKS_CACHED:
            self._cache.popitem(last=False)
        return links

    def __iter__(self) -> Iterator[str]:
        return (row[0] for row in self.db.execute("SELECT id FROM blocks"))

    def __len__(self) -> int:
        return int(self.db.execute("SELECT count(*) FROM blocks").fetchone()[0])


def _slim(link: Any) -> Any:
    return ({name: link[name] for name in GRAPH_LINK_FIELDS if name in link}
            if isinstance(link, dict) else link)


class LinkGraph:
    """The site's internal links, turned into inbound lists per page and section."""

    def __init__(self, *, cap: int = DEFAULT_CAP) -> None:
        self.cap = cap
        self.db = sqlite3.connect("", isolation_level=None)  # "": a private temp file
        self.db.executescript(_SCHEMA.format(cache_kb=CACHE_KB))
        self.db.execute("BEGIN")
        self.ranked = False
        self._page: tuple[str, dict[str, tuple[int, list[Ranked]]]] = ("", {})
        self._owners: tuple[str, dict[str, list[str]]] = ("", {})

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> LinkGraph:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def add_identities(self, pages: Path) -> None:
        """Pass 1: every URL a page was seen under, and its heading anchors."""
        db = self.db
        for line in _page_lines(pages):
            canonical = _field(line, "canonical_url")
            if not isinstance(canonical, str):
                continue
            db.execute("INSERT OR REPLACE INTO canon VALUES (?, ?)", (canonical, canonical))
            db.executemany("INSERT OR IGNORE INTO canon VALUES (?, ?)",
                           [(urldefrag(str(url))[0], canonical)
                            for url in _field(line, "observed_urls") or ()])
            anchors = {str(h["anchor"]): list(h.get("path") or [])
                       for h in _field(line, "headings") or ()
                       if isinstance(h, dict) and h.get("anchor")}
            if anchors:
                db.execute("INSERT OR REPLACE INTO anchors VALUES (?, ?)",
                           (canonical, json.dumps(anchors)))

    def add_links(self, pages: Path, templates: Mapping[str, list[dict[str, Any]]] | None = None
                  ) -> None:
        """Pass 2: every internal link from one page to another (its template blocks'
        links joined back from `templates`, in page order as `join_links` gives them:
        `export.templates`), stored in page order. A block's rows are made once, not on
        every page that holds it (a sidebar is on every page of its section)."""
        block_rows: OrderedDict[str, list[tuple[Any, _LinkRow]]] = OrderedDict()

        def rows_of(template_id: str) -> list[tuple[Any, _LinkRow]]:
            rows = block_rows.get(template_id)
            if rows is None:
                links = (templates.get(template_id) if templates is not None else None) or ()
                rows = block_rows[template_id] = [
                    (link.get("position", 0), row) for link in links
                    if (row := _link_row(link)) is not None]
                if len(block_rows) > BLOCKS_CACHED:
                    block_rows.popitem(last=False)
            return rows

        for line in _page_lines(pages):
            source = _field(line, "canonical_url")
            links = _field(line, "links")
            if not isinstance(source, str) or not isinstance(links, list):
                continue
            ids = _field(line, "template_ids") if templates is not None else None
            if ids:
                offsets = _field(line, "template_offsets") or [0] * len(ids)
                placed = [(link.get("position", 0), row) for link in links
                          if (row := _link_row(link)) is not None]
                for template_id, offset in zip(ids, offsets, strict=False):
                    placed += [(position + offset, row) for position, row in rows_of(template_id)]
                placed.sort(key=lambda item: item[0])  # stable: `join_links`' order
                page_rows = [row for _position, row in placed]
            else:
                page_rows = [row for link in links if (row := _link_row(link)) is not None]
            self.db.executemany("INSERT INTO links VALUES (?, ?, ?, ?, ?, ?, ?)",
                                [(url, fragment, source, text, score, label, region)
                                 for url, fragment, text, score, label, region in page_rows
                                 if url != source])  # the page's own sections: `rank` drops them

    def add_run(self, run_dir: Path) -> None:
        """Both passes over a run directory's pages.jsonl, its template blocks joined."""
        pages = run_dir / "pages.jsonl"
        self.add_identities(pages)
        self.add_links(pages, _Blocks(self.db, run_dir))

    def rank(self) -> int:
        """Turn the stored links into each target's count and best `cap` (links to a page
        under any URL it was seen under; none from the page itself); returns the number
        of targets. Links stay in the order they were stored, which breaks ties."""
        rows = self.db.execute(
            "SELECT c.canonical, l.fragment, l.source, l.text, l.score, l.label, l.region,"
            " l.rowid FROM links l JOIN canon c ON c.url = l.url"
            " WHERE c.canonical != l.source ORDER BY c.canonical, l.fragment, l.rowid")
        targets = 0
        insert = "INSERT INTO inbound VALUES (?, ?, ?, ?)"
        for (canonical, fragment), group in itertools.groupby(rows, lambda r: r[:2]):
            count, best = rank_target((r[2:] for r in group), self.cap)
            self.db.execute(insert, (canonical, fragment, count, json.dumps(best)))
            targets += 1
        self.db.execute("DELETE FROM links")
        self.ranked = True
        return targets

    def targets(self) -> Iterator[tuple[tuple[str, str], int, list[Ranked]]]:
        """Every target (page, fragment) with its count and best links (after `rank`)."""
        for canonical, fragment, count, best in self.db.execute(
                "SELECT canonical, fragment, count, best FROM inbound"):
            yield (canonical, fragment), count, [tuple(b) for b in json.loads(best)]

    def _page_targets(self, canonical: str) -> dict[str, tuple[int, list[Ranked]]]:
        """One page's targets by fragment (the last page asked for is kept: a page's
        chunks come one after another)."""
        if self._page[0] != canonical or not canonical:
            self._page = (canonical, {
                fragment: (count, [tuple(b) for b in json.loads(best)])
                for fragment, count, best in self.db.execute(
                    "SELECT fragment, count, best FROM inbound WHERE canonical = ?",
                    (canonical,))})
        return self._page[1]

    def for_chunk(self, canonical: str, anchors: list[str]) -> tuple[list[dict[str, Any]], int]:
        """The ranked, capped inbound links of one chunk and the count of them all:
        links to its sections (anchors the chunk holds) first, then links to its page."""
        targets = self._page_targets(canonical)
        ranked: list[Ranked] = []
        count = 0
        for bonus, fragment in [(1.0, a) for a in anchors if a] + [(0.0, "")]:
            entry = targets.get(fragment)
            if entry is not None:
                count += entry[0]
                ranked.extend((score + bonus, order, item) for score, order, item in entry[1])
        ranked.sort(key=lambda r: (r[0], r[1]), reverse=True)
        links, seen = [], set()
        for _score, _order, item in ranked:
            dedup = (item["url"], item["anchor_text"].lower())
            if dedup not in seen:
                seen.add(dedup)
                links.append(item)
        return links[: self.cap], count

    def fragment_owners(self, chunks: Path) -> None:
        """Record which chunk holds each linked fragment that names a heading inside it
        rather than its own anchor (a subsection merged into its parent's chunk): the
        chunk whose heading path is the longest prefix of the heading's (`owned`)."""
        db = self.db
        with chunks.open(encoding="utf-8") as handle:
            rows = ((meta["canonical_url"], str(_field(line, "id")),
                     json.dumps(list(meta.get("heading_path") or [])))
                    for line in handle
                    if isinstance(meta := _field(line, "metadata"), dict)
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
        paths = json.loads(row[0]) if row else {}
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
