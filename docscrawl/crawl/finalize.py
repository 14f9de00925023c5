"""End-of-crawl updates to records already written (aliases found later, canonical changes).

Each file is rewritten at most once, streaming line by line into a temporary file that
replaces the original atomically; a crash during the rewrite leaves the original intact.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from docscrawl.dedup.content import sha256_id
from docscrawl.export.records import as_dict
from docscrawl.extract.model import VersionInfo
from docscrawl.extract.site_versions import SiteVersions
from docscrawl.extract.version import evidence_of
from docscrawl.jsonl import dumps_line, dumps_value, parse_object, replacing

Transform = Callable[[dict[str, Any]], dict[str, Any]]
Filter = Callable[[dict[str, Any]], dict[str, Any] | None]  # None drops the line

# The pages.jsonl fields `page_updater` reads and changes; `records.page_records` writes
# them first, so the end-of-crawl update parses nothing else.
PAGE_LEADING_FIELDS = ("id", "canonical_url", "observed_urls", "discovery", "sitemap_lastmod")
# Every pages.jsonl field the end of the crawl may change: the leading ones, the version
# and title (the page at a better canonical URL's; the site's version signal for pages
# written before it was known) and `aggregate_of`. A feed (`-O`) carries the records as
# first written.
UPDATED_AT_END = (*PAGE_LEADING_FIELDS, "version", "title", "aggregate_of")


def rewrite_jsonl(path: Path, transform: Filter, *, leading: tuple[str, ...] = ()) -> None:
    """Apply `transform` to every line of a JSONL file; torn lines, and lines for which
    it returns None, are dropped.

    `leading`: keys that open every line, in this order, and the only ones `transform`
    reads or changes: only they are parsed and written again, the rest of the line is
    copied as it is (a page line's Markdown and links are most of it). A line that does
    not open with them is parsed whole."""
    if not path.exists():
        return
    with path.open(encoding="utf-8") as src, replacing(path) as dst:
        for raw in src:
            head = _leading_fields(raw, leading) if leading else None
            if head is not None:
                fields, rest = head
                updated = transform(fields)
                if updated is not None and list(updated) == list(leading):
                    dst.write(_join_fields(updated, rest))
                    continue
            record = parse_object(raw)
            if record is None:
                continue
            result = transform(record)
            if result is not None:
                dst.write(dumps_line(result))


_DECODER = json.JSONDecoder()


def _leading_fields(line: str, keys: tuple[str, ...]) -> tuple[dict[str, Any], str] | None:
    """The values of `keys` opening a compact JSON line, and the text after them (the
    remaining fields and the closing brace); None when the line does not open with them."""
    if not line.startswith("{") or not line.endswith("}\n"):
        return None
    fields: dict[str, Any] = {}
    at = 1
    try:
        for key in keys:
            name = f'"{key}":'
            if not line.startswith(name, at):
                return None
            fields[key], at = _DECODER.raw_decode(line, at + len(name))
            if line[at] == ",":
                at += 1
            elif line[at] != "}":
                return None
    except (ValueError, IndexError):
        return None
    return fields, line[at:]


def _join_fields(fields: dict[str, Any], rest: str) -> str:
    head = ",".join(dumps_value(key) + ":" + dumps_value(value) for key, value in fields.items())
    return "{" + head + ("" if rest.startswith("}") else ",") + rest


def resolve_renames(renames: dict[str, str]) -> dict[str, str]:
    """Follow rename chains (a -> b -> c becomes a -> c, b -> c)."""
    resolved = {}
    for old in renames:
        new, hops = renames[old], 0
        while new in renames and hops < len(renames):
            new, hops = renames[new], hops + 1
        resolved[old] = new
    return resolved


def page_updater(grown: Mapping[str, dict[str, Any]], renames: dict[str, str],
                 relabels: Mapping[str, dict[str, Any]] | None = None) -> Transform:
    """pages.jsonl: new canonical URL and id (and the version and title of the page at
    that URL, `relabels`), grown observed URLs and discovery."""
    def update(record: dict[str, Any]) -> dict[str, Any]:
        old = record.get("canonical_url")
        if old is None:
            return record
        new = renames.get(old, old)
        if new != old:
            record["canonical_url"], record["id"] = new, sha256_id(new)
            if relabels and new in relabels:
                record.update(relabels[new])
        record.update(grown.get(new, {}))
        return record
    return update


def chunk_fields(fields: Mapping[str, Any]) -> dict[str, Any]:
    """A chunk's `metadata` fields for changed page fields (`version` is the value there)."""
    out: dict[str, Any] = {}
    if "version" in fields:
        out["version"] = (fields["version"] or {}).get("value")
    if "title" in fields:
        out["title"] = fields["title"]
    return out


def page_ref_updater(renames: dict[str, str],
                     relabels: Mapping[str, dict[str, Any]] | None = None) -> Transform:
    """structure.jsonl and chunks.jsonl: follow the page's new canonical URL and id (and a
    chunk its page's new version and title)."""
    def update(record: dict[str, Any]) -> dict[str, Any]:
        meta = record.get("metadata")
        old = record.get("canonical_url") or (meta or {}).get("canonical_url")
        new = renames.get(old) if old is not None else None
        if old is None or new is None:
            return record
        record["page_id"] = sha256_id(new)
        if "canonical_url" in record:
            record["canonical_url"] = new
        if meta:
            meta["canonical_url"] = new
            if relabels and new in relabels:
                meta.update(chunk_fields(relabels[new]))
            source = meta.get("source_url") or ""
            if source == old or source.startswith(old + "#"):
                meta["source_url"] = new + source[len(old):]
        return record
    return update


def log_updater(renames: dict[str, str]) -> Transform:
    """crawl_log.jsonl: `duplicate_of` and `extracted` references follow renames."""
    def update(event: dict[str, Any]) -> dict[str, Any]:
        for key in ("duplicate_of", "canonical_url"):
            value = event.get(key)
            if value in renames:
                event[key] = renames[value]
                if key == "canonical_url" and "page_id" in event:
                    event["page_id"] = sha256_id(renames[value])
        return event
    return update


def version_updater(site: SiteVersions, cold: set[str],
                    updated: dict[str, dict[str, Any]]) -> Transform:
    """pages.jsonl: pages written before the site's version evidence was known (`cold`,
    by final URL) get it now; `updated` collects their canonical URL -> new version."""
    def update(record: dict[str, Any]) -> dict[str, Any]:
        if record.get("final_url") not in cold:
            return record
        old = record.get("version") or {}
        info = VersionInfo(old.get("value"), old.get("status") or "unversioned",
                           evidence_of(old))
        new, _ = site.apply(info, [])
        if new is not info:
            record["version"] = as_dict(new)
            updated[record.get("canonical_url") or ""] = record["version"]
        return record
    return update


def chunk_version_updater(updated: Mapping[str, dict[str, Any]]) -> Transform:
    """chunks.jsonl: `metadata.version` of the pages `version_updater` changed."""
    def update(record: dict[str, Any]) -> dict[str, Any]:
        meta = record.get("metadata")
        if meta and meta.get("canonical_url") in updated:
            meta.update(chunk_fields({"version": updated[meta["canonical_url"]]}))
        return record
    return update


def aggregate_updater(aggregates: Mapping[str, list[str]]) -> Transform:
    """pages.jsonl: `aggregate_of` on the pages that concatenate others."""
    def update(record: dict[str, Any]) -> dict[str, Any]:
        parts = aggregates.get(record.get("canonical_url") or "")
        if parts is not None:
            record["aggregate_of"] = parts
        return record
    return update


def chunk_dropper(pages: Mapping[str, Any], dropped: list[int]) -> Filter:
    """chunks.jsonl: drop the chunks of `pages` (by canonical URL); counts in `dropped`."""
    def update(record: dict[str, Any]) -> dict[str, Any] | None:
        if (record.get("metadata") or {}).get("canonical_url") in pages:
            dropped[0] += 1
            return None
        return record
    return update
