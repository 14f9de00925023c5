"""The end of the crawl's line updaters: what the records already written learn after them.

Each returns a function that takes one decoded line and returns it updated, for a streamed
rewrite (`jsonl.rewrite_jsonl`). `crawl.finish` applies them when a crawl ends, and
`docscrawl merge` (`inspect.merge`) when it joins the parts of a distributed crawl."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from docscrawl.dedup.content import sha256_id
from docscrawl.export.records import as_dict
from docscrawl.extract.model import VersionInfo
from docscrawl.extract.site_versions import SiteVersions
from docscrawl.extract.version import evidence_of
from docscrawl.jsonl import rewrite_jsonl

Transform = Callable[[dict[str, Any]], dict[str, Any]]
Filter = Callable[[dict[str, Any]], dict[str, Any] | None]  # None drops the line

# The pages.jsonl fields `page_updater` reads and changes (`records.page_records`: first)
PAGE_LEADING_FIELDS = ("id", "canonical_url", "observed_urls", "discovery", "sitemap_lastmod")
# Every pages.jsonl field the end of the crawl may change: the leading ones, the version and
# title (the page at a better canonical URL's; the site's version signal for pages written
# before it was known), `aggregate_of`. A feed (`-O`) carries records as first written.
UPDATED_AT_END = (*PAGE_LEADING_FIELDS, "version", "title", "aggregate_of")
# The pages.jsonl fields `version_updater` reads and changes (before Markdown and links)
VERSION_FIELDS = ("canonical_url", "final_url", "version")


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
    out = {"version": (fields["version"] or {}).get("value")} if "version" in fields else {}
    return {**out, "title": fields["title"]} if "title" in fields else out


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


def chunk_version_update(updated: Mapping[str, dict[str, Any]]
                         ) -> Callable[[dict[str, Any]], bool]:
    """A chunk's metadata: the `version` of the pages `version_updater` changed (True
    when it was one of theirs)."""
    def update(meta: dict[str, Any]) -> bool:
        if meta.get("canonical_url") not in updated:
            return False
        meta.update(chunk_fields({"version": updated[meta["canonical_url"]]}))
        return True
    return update


def chunk_version_updater(updated: Mapping[str, dict[str, Any]]) -> Transform:
    """chunks.jsonl: `metadata.version` of the pages `version_updater` changed."""
    update_meta = chunk_version_update(updated)
    def update(record: dict[str, Any]) -> dict[str, Any]:
        meta = record.get("metadata")
        if meta:
            update_meta(meta)
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


def rewrite_in_turn(path: Path, updates: list[tuple[Transform, tuple[str, ...]]]) -> None:
    """`rewrite_jsonl` with each (transform, fields) of `updates` in turn, in one pass: the
    lines the rewrites one after the other write (the fields of them all read)."""
    def update(record: dict[str, Any]) -> dict[str, Any]:
        for transform, _ in updates:
            record = transform(record)
        return record
    if updates:
        rewrite_jsonl(path, update, fields=tuple(dict.fromkeys(
            field for _, fields in updates for field in fields)))
