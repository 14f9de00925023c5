"""The only module that knows the JSON field names of pages.jsonl and structure.jsonl."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from docscrawl.crawl.items import FetchedPage
from docscrawl.dedup.content import sha256_id
from docscrawl.export.templates import TemplateBlock, split_links
from docscrawl.extract.model import PageExtract


def page_id(canonical_url: str) -> str:
    """`sha256:<hex>` of the canonical URL: the page's stable id."""
    return sha256_id(canonical_url)


def as_dict(obj: Any) -> dict[str, Any]:
    """A slotted extraction dataclass as a dict of its fields, one level deep.

    `dataclasses.asdict` deep-copies every value; records are serialized at once and
    never changed, so the field values (strings, lists of strings) are shared instead.
    Nested dataclasses (`VersionInfo.evidence`) are converted too.
    """
    out = {}
    for name in obj.__slots__:
        value = getattr(obj, name)
        if isinstance(value, list) and value and hasattr(value[0], "__slots__"):
            value = [as_dict(v) for v in value]
        out[name] = value
    return out


def as_dicts(items: list[Any]) -> list[dict[str, Any]]:
    """`as_dict` of each item."""
    return [as_dict(item) for item in items]


# Fields pages.jsonl and structure.jsonl both hold, as the same (shared) lists.
SHARED_FIELDS = ("links", "template_ids", "template_offsets", "regions", "headings",
                 "warnings")


def page_records(page: FetchedPage,
                 keep: Callable[[str, TemplateBlock], bool] | None = None,
                 ) -> tuple[dict[str, Any], dict[str, Any], list[TemplateBlock]]:
    """The page's pages.jsonl and structure.jsonl lines, and the template blocks they
    reference (`export.templates`: the links of the page's template regions, written
    once per site, those `keep` chooses; None keeps every link inline). The lists both
    records hold (SHARED_FIELDS) are converted once and shared."""
    links = as_dicts(page.extract.links)
    blocks: list[TemplateBlock] = []
    offsets: list[int] = []
    if keep is not None:
        candidates = [r.locator for r in page.extract.regions if r.region != "main_content"]
        links, blocks, offsets = split_links(links, candidates, keep)
    shared = {
        "links": links,
        "template_ids": [block.template_id for block in blocks],
        "template_offsets": offsets,
        "regions": as_dicts(page.extract.regions),
        "headings": as_dicts(page.extract.headings),
        "warnings": as_dicts(page.extract.warnings) + page.warnings,
    }
    record, structure = _page_record(page, shared), _structure_record(page, shared)
    if not blocks:  # no template block: the records as before (no empty fields to carry)
        for fields in (record, structure):
            del fields["template_ids"], fields["template_offsets"]
    return record, structure, blocks


def _page_record(page: FetchedPage, shared: dict[str, Any]) -> dict[str, Any]:
    """One pages.jsonl line, as in the contract."""
    ext: PageExtract = page.extract
    track = page.track
    assert page.canonical_url is not None and page.content_hash is not None
    return {
        # First the fields an end-of-crawl update may change (finish.PAGE_LEADING_FIELDS)
        "id": page_id(page.canonical_url),
        "canonical_url": page.canonical_url,
        "observed_urls": list(track.observed),
        "discovery": track.discovery_records(),
        "sitemap_lastmod": track.sitemap_lastmod,
        "fetched_url": track.fetched_url or track.key,
        "final_url": page.final_url,
        "redirect_chain": list(track.redirect_chain),
        "title": ext.title,
        "main_heading": ext.main_heading,
        "description": ext.description,
        "language": ext.language,
        "generator": ext.generator,
        "version": as_dict(ext.version),
        "breadcrumbs": as_dicts(ext.breadcrumbs),
        "breadcrumb_source": ext.breadcrumb_source,
        "breadcrumb_observations": {
            "visible": as_dicts(ext.breadcrumb_observations.get("visible", [])),
            "jsonld": as_dicts(ext.breadcrumb_observations.get("jsonld", [])),
        },
        "navigation_path": list(ext.navigation_path),
        "section_path": list(ext.section_path),
        "headings": shared["headings"],
        "fragment_ids": list(ext.fragment_ids),
        "markdown": ext.markdown,
        "code_blocks": as_dicts(ext.code_blocks),
        "links": shared["links"],
        "template_ids": shared["template_ids"],
        "template_offsets": shared["template_offsets"],
        "regions": shared["regions"],
        "fetch_mode": page.fetch_mode,
        "http": {
            "status": page.status,
            "content_type": page.content_type,
            "etag": page.etag,
            "last_modified": page.last_modified,
        },
        "discovery_truncated": track.discovery_dropped,
        "retrieved_at": page.retrieved_at,
        "content_hash": page.content_hash,
        "warnings": shared["warnings"],
        "render_reason": page.render_reason,
        "depth": track.depth,
    }


def _structure_record(page: FetchedPage, shared: dict[str, Any]) -> dict[str, Any]:
    """One structure.jsonl line: the page's block tree, regions, links, headings, warnings."""
    ext: PageExtract = page.extract
    assert page.canonical_url is not None
    return {
        "page_id": page_id(page.canonical_url),
        "canonical_url": page.canonical_url,
        "main_locator": ext.main_locator,
        "blocks": as_dicts(ext.blocks),
        "regions": shared["regions"],
        "links": shared["links"],
        "template_ids": shared["template_ids"],
        "template_offsets": shared["template_offsets"],
        "headings": shared["headings"],
        "warnings": shared["warnings"],
    }
