"""The only module that knows the JSON field names of pages.jsonl and structure.jsonl."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from docscrawl.dedup.content import sha256_id
from docscrawl.extract.model import Breadcrumb, PageExtract
from docscrawl.items import FetchedPage


def page_id(canonical_url: str) -> str:
    """`sha256:<hex>` of the canonical URL: the page's stable id."""
    return sha256_id(canonical_url)


def _crumbs(items: list[Breadcrumb]) -> list[dict[str, Any]]:
    return [asdict(item) for item in items]


def page_record(page: FetchedPage) -> dict[str, Any]:
    """One pages.jsonl line, as in the contract."""
    ext: PageExtract = page.extract
    track = page.track
    assert page.canonical_url is not None and page.content_hash is not None
    warnings = [asdict(w) for w in ext.warnings] + page.warnings
    return {
        "id": page_id(page.canonical_url),
        "canonical_url": page.canonical_url,
        "fetched_url": track.fetched_url or track.key,
        "final_url": page.final_url,
        "observed_urls": list(track.observed),
        "redirect_chain": list(track.redirect_chain),
        "title": ext.title,
        "main_heading": ext.main_heading,
        "description": ext.description,
        "language": ext.language,
        "generator": ext.generator,
        "version": asdict(ext.version),
        "breadcrumbs": _crumbs(ext.breadcrumbs),
        "breadcrumb_source": ext.breadcrumb_source,
        "breadcrumb_observations": {
            "visible": _crumbs(ext.breadcrumb_observations.get("visible", [])),
            "jsonld": _crumbs(ext.breadcrumb_observations.get("jsonld", [])),
        },
        "navigation_path": list(ext.navigation_path),
        "section_path": list(ext.section_path),
        "headings": [asdict(h) for h in ext.headings],
        "markdown": ext.markdown,
        "code_blocks": [asdict(c) for c in ext.code_blocks],
        "links": [asdict(link) for link in ext.links],
        "regions": [asdict(r) for r in ext.regions],
        "fetch_mode": page.fetch_mode,
        "http": {
            "status": page.status,
            "content_type": page.content_type,
            "etag": page.etag,
            "last_modified": page.last_modified,
        },
        "discovery": list(track.discovery),
        "discovery_truncated": track.discovery_dropped,
        "sitemap_lastmod": track.sitemap_lastmod,
        "retrieved_at": page.retrieved_at,
        "content_hash": page.content_hash,
        "warnings": warnings,
        "render_reason": page.render_reason,
        "depth": track.depth,
    }


def structure_record(page: FetchedPage) -> dict[str, Any]:
    """One structure.jsonl line: the page's block tree, regions, links, headings, warnings."""
    ext: PageExtract = page.extract
    assert page.canonical_url is not None
    return {
        "page_id": page_id(page.canonical_url),
        "canonical_url": page.canonical_url,
        "main_locator": ext.main_locator,
        "blocks": [asdict(b) for b in ext.blocks],
        "regions": [asdict(r) for r in ext.regions],
        "links": [asdict(link) for link in ext.links],
        "headings": [asdict(h) for h in ext.headings],
        "warnings": [asdict(w) for w in ext.warnings] + page.warnings,
    }
