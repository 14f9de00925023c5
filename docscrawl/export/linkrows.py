"""A page's internal links as the link graph stores them (`export.linkgraph`): one row
per link, (url, fragment, anchor text, score, container label, region), in page order with
its template blocks' links joined back (`export.templates.join_links`' order), whether the
links come from a written pages.jsonl line or from the record the crawl is writing."""

from __future__ import annotations

import json
import sqlite3
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urldefrag

from docscrawl.export.templates import TEMPLATES_FILE, template_blocks
from docscrawl.jsonl import resolve_jsonl, text_lines

# How much a link from each region says about its target: a link written into prose or a
# "see also" is chosen by an author for this target; navigation repeats on every page.
REGION_WEIGHT = {
    "main_content": 4.0, "related_content": 3.5, "table_of_contents": 2.0,
    "sidebar_navigation": 1.5, "breadcrumb": 1.0, "pagination": 1.0,
    "primary_navigation": 0.8, "footer_navigation": 0.5, "unknown": 1.0,
}
CONTAINER_WEIGHT = {"paragraph": 1.0, "card": 0.9, "table": 0.8, "list_item": 0.7,
                    "heading": 0.6, "other": 0.5, "navigation": 0.3}
# The link fields the graph reads (`add_links`, `link_row`; `position` orders a page's
# links when its template blocks are joined back).
GRAPH_LINK_FIELDS = ("url", "text", "region", "container", "container_label", "target",
                     "position")
BLOCKS_CACHED = 256  # decoded template blocks kept (a section's pages share a sidebar)


def page_lines(path: Path) -> Iterator[str]:
    for line in text_lines(path):
        if line.startswith("{") and line.endswith("}\n"):
            yield line


def _score(region: Any, container: Any, label: Any, has_text: bool) -> float:
    """Rank of one inbound link from its fields: region, then container, then labelled
    anchor text (a string key is looked up as it is, any other value as its `str`, as
    the weights' keys are strings)."""
    score = REGION_WEIGHT.get(region if type(region) is str else str(region), 1.0)
    score *= CONTAINER_WEIGHT.get(container if type(container) is str else str(container), 0.5)
    return score + (0.1 if label else 0.0) + (0.05 if has_text else -1.0)


# An internal link as the graph stores it, less its source page:
# (url, fragment, anchor text, score, container label, region)
LinkRow = tuple[str, str, str, float, str | int | None, str | int | None]


def link_row(link: Any) -> LinkRow | None:
    """`link`'s row, None when it is not an internal link. (Its fields read once: a page
    has hundreds of links, every one fed to the graph while the crawl writes it.)"""
    if not isinstance(link, dict):
        return None
    get = link.get
    if get("target") != "internal":
        return None
    url, fragment = _defrag(str(get("url") or ""))
    text = " ".join(str(get("text") or "").split())  # empty exactly when `strip` is
    label, region = get("container_label"), get("region")
    return (url, fragment, text, _score(region, get("container"), label, bool(text)),
            _scalar(label), _scalar(region))


def _defrag(url: str) -> tuple[str, str]:
    """`urldefrag`'s answer, cut at the first `#` as it does: parsing and unparsing a plain
    absolute http(s) URL (no query or parameters, printable ASCII) gives it back as is."""
    base, mark, fragment = url.partition("#")
    if not mark:
        return url, ""
    if (base.startswith(("https://", "http://")) and base.isascii() and base.isprintable()
            and " " not in base and "?" not in base and ";" not in base and "[" not in base):
        return base, fragment
    defragged = urldefrag(url)
    return defragged.url, defragged.fragment


def _scalar(value: Any) -> str | int | None:
    """A link's label or region as SQLite keeps it (they are strings or null; any other
    value as its `str`, but an integer): what the inbound links hold then is plain JSON
    (`jsonenc.dumps_value(plain=True)`), no float among it."""
    if value is None or type(value) is str:
        return value
    return value if isinstance(value, str | int) else str(value)


class Blocks(Mapping[str, list[dict[str, Any]]]):
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


class BlockRows:
    """A template block's link rows, made once, not on every page that holds it (a
    sidebar is on every page of its section); the last `BLOCKS_CACHED` kept."""

    def __init__(self, templates: Mapping[str, list[dict[str, Any]]] | None) -> None:
        self.templates = templates
        self._rows: OrderedDict[str, list[tuple[Any, LinkRow]]] = OrderedDict()

    def __call__(self, template_id: str) -> list[tuple[Any, LinkRow]]:
        rows = self._rows.get(template_id)
        if rows is None:
            links = (self.templates.get(template_id) if self.templates is not None
                     else None) or ()
            rows = self._rows[template_id] = [
                (link.get("position", 0), row) for link in links
                if (row := link_row(link)) is not None]
            if len(self._rows) > BLOCKS_CACHED:
                self._rows.popitem(last=False)
        return rows


def page_rows(links: list[Any], ids: list[Any], offsets: list[Any] | None,
               rows_of: BlockRows) -> list[LinkRow]:
    """A page's link rows in page order: its own links' and, placed by their offsets,
    its template blocks' (`join_links`' order)."""
    if not ids:
        return [row for link in links if (row := link_row(link)) is not None]
    placed = [(link.get("position", 0), row) for link in links
              if (row := link_row(link)) is not None]
    for template_id, offset in zip(ids, offsets or [0] * len(ids), strict=False):
        placed += [(position + offset, row) for position, row in rows_of(template_id)]
    placed.sort(key=lambda item: item[0])  # stable: `join_links`' order
    return [row for _position, row in placed]
