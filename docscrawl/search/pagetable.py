"""The pages table (a page's byte offset in pages.jsonl, its aliases, aggregate_of), the
versions the site holds and its default, the site's title affixes, and what the site's
indexes and summary tables call each chunk (`sitevocab`, `vocabassign`): one pass over
pages.jsonl, then one over the chunks of the pages something points at."""

from __future__ import annotations

import json
from collections import Counter
from typing import TYPE_CHECKING

from docscrawl.chunking.chunker import chunk_anchors
from docscrawl.jsonfields import field
from docscrawl.search.fields import SiteAffixes, Vocab
from docscrawl.search.sitevocab import SiteVocabulary
from docscrawl.search.versions import choose_default, default_aliases
from docscrawl.search.vocabassign import ChunkView, assign
from docscrawl.search.vocabread import might_hold
from docscrawl.seekjsonl import SeekPoints, scan_lines

if TYPE_CHECKING:
    from docscrawl.search.index import SearchIndex


def index_pages(index: SearchIndex) -> SiteVocabulary:
    """Pages table (offsets for get_page, aggregate_of), the default version, and
    what the site's indexes and summary tables call its sections (`sitevocab`)."""
    db = index.db
    db.execute("DELETE FROM pages")
    db.execute("DELETE FROM aliases")
    versions: Counter[str] = Counter()
    titles: list[str] = []
    page_urls: list[tuple[str | None, list[str]]] = []
    seed = seed_url(index)
    seed_version: str | None = None
    vocabulary = SiteVocabulary()
    points = SeekPoints()  # where pages.jsonl.gz's members start (`index.page_line`)
    for line_offset, raw in scan_lines(index.files / "pages.jsonl", points):
        line = raw.decode("utf-8", "replace")
        url = field(line, "canonical_url")
        if not isinstance(url, str):
            continue
        observed = field(line, "observed_urls")
        version_obj = field(line, "version")
        version = version_obj.get("value") if isinstance(version_obj, dict) else None
        title = field(line, "title")
        aggregate = field(line, "aggregate_of")
        db.execute("INSERT OR REPLACE INTO pages VALUES(?,?,?,?,?)",
                   (url, line_offset, version, title,
                    json.dumps(aggregate) if aggregate else None))
        for alias in [url, *(observed or [])]:
            db.execute("INSERT OR IGNORE INTO aliases VALUES(?,?)", (str(alias), url))
        if version:
            versions[str(version)] += 1
        if isinstance(title, str):
            titles.append(title)
        page_urls.append((str(version) if version else None,
                          [url, *map(str, observed or [])]))
        if seed and (url == seed or seed in (observed or ())):
            seed_version = version
        page = {"canonical_url": url, "observed_urls": observed or [], "title": title,
                "main_heading": field(line, "main_heading"),
                "headings": field(line, "headings") or []}
        if might_hold(line):
            page["markdown"] = field(line, "markdown")
            page["fragment_ids"] = field(line, "fragment_ids")
        vocabulary.add_page(page)
    default = choose_default(seed_version, versions)
    index.set_meta("default_version", default or "")
    index.set_meta("default_aliases", json.dumps(sorted(default_aliases(page_urls, default))))
    index.set_meta("pages_members", json.dumps(points.to_json()))
    index.set_meta("versions", json.dumps(sorted(versions)))
    learn_affixes(index, titles)
    return vocabulary


def assign_vocabulary(index: SearchIndex, learned: SiteVocabulary) -> dict[str, Vocab]:
    """Chunk id -> what the site's indexes and summaries say of it, and whether it is
    part of an index itself. Only the chunks of pages something points at, or of
    index pages, are parsed (a page's chunks are consecutive in chunks.jsonl)."""
    terms = learned.finish()
    parts = learned.index_parts
    found: dict[str, Vocab] = {}
    page: str | None = None
    group: list[ChunkView] = []

    def flush() -> None:
        if page is not None and page in terms:
            anchors = learned.anchor_paths.get(page, {})
            labels = {f: learned.labels.get((page, f), set()) for f in terms[page]}
            for chunk_id, text in assign(group, terms[page], anchors, labels).items():
                found[chunk_id] = Vocab(text, found.get(chunk_id, Vocab()).site_index)

    for found_line in index.chunk_lines():
        line = found_line.text
        url = field(line, "canonical_url")
        if url not in terms and url not in parts:
            continue
        try:
            record = json.loads(line)
        except ValueError:
            continue
        meta = record.get("metadata") or {}
        if url != page:
            flush()
            page, group = url, []
        path = tuple(str(h) for h in meta.get("heading_path") or ())
        chunk_id = str(record.get("id"))
        group.append(ChunkView(chunk_id, path, chunk_anchors(meta),
                               str(record.get("markdown") or "")))
        if any(path[:len(p)] == p for p in parts.get(url, ())):
            found[chunk_id] = Vocab("", True)
    flush()
    return found


def learn_affixes(index: SearchIndex, titles: list[str]) -> None:
    """The site's title affixes; when they changed, every chunk's fields are stale."""
    index.affixes = SiteAffixes.learn(titles)
    learned = json.dumps(sorted(index.affixes.segments))
    if index.meta("title_affixes") != learned:
        index.db.execute("INSERT INTO fts(fts) VALUES('delete-all')")
        index.db.execute("INSERT INTO vocab(vocab) VALUES('delete-all')")
        index.db.execute("DELETE FROM chunks")
        index.db.execute("DELETE FROM urls")
        index.db.execute("DELETE FROM sections")
        index.set_meta("title_affixes", learned)


def seed_url(index: SearchIndex) -> str | None:
    try:
        run = json.loads((index.files / "run.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    site = run.get("site") if isinstance(run, dict) else None
    return site if isinstance(site, str) else None
