"""The only module that knows the JSON field names of pages.jsonl and structure.jsonl."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import is_dataclass
from typing import Any, Literal, NotRequired, TypedDict, get_args, get_origin, get_type_hints

from docscrawl.crawl.items import FetchedPage
from docscrawl.dedup.content import sha256_id
from docscrawl.discovery.pagetrack import DiscoveryRecord
from docscrawl.export.templates import TemplateBlock, split_links

# A dataclass of `docscrawl.extract.model` as `as_dict` writes it: its fields, by name.
FieldDict = dict[str, Any]


class HttpFacts(TypedDict):
    """A page record's `http`: what the server answered."""

    status: int
    content_type: str
    etag: str | None
    last_modified: str | None


class PageRecord(TypedDict):
    """One pages.jsonl line as the crawl writes it (the contract's names). The end of
    the crawl may change some fields of the written line (`finalize.PAGE_LEADING_FIELDS`)."""

    id: str
    canonical_url: str
    observed_urls: list[str]
    discovery: list[DiscoveryRecord]
    sitemap_lastmod: str | None
    fetched_url: str
    final_url: str
    redirect_chain: list[str]
    title: str | None
    main_heading: str | None
    description: str | None
    language: str | None
    generator: str | None
    version: FieldDict  # VersionInfo
    breadcrumbs: list[FieldDict]  # Breadcrumb
    breadcrumb_source: str
    breadcrumb_observations: dict[str, list[FieldDict]]  # "visible", "jsonld": Breadcrumb
    navigation_path: list[str]
    section_path: list[str]
    headings: list[FieldDict]  # Heading
    fragment_ids: list[str]
    markdown: str
    code_blocks: list[FieldDict]  # CodeBlock
    links: list[FieldDict]  # Link
    template_ids: NotRequired[list[str]]  # only on a page with template blocks
    template_offsets: NotRequired[list[int]]
    regions: list[FieldDict]  # Region
    fetch_mode: str
    http: HttpFacts
    discovery_truncated: int
    retrieved_at: str
    content_hash: str
    warnings: list[FieldDict]  # ExtractionWarning
    render_reason: str | None
    depth: int
    body_hash: NotRequired[str | None]  # the raw body's hash, set by the export stage
    aggregate_of: NotRequired[list[str]]  # set at the end of the crawl (`crawl.finalize`)


class StructureRecord(TypedDict):
    """One structure.jsonl line: the page's block tree and what it shares with its page
    record (`SHARED_FIELDS`)."""

    page_id: str
    canonical_url: str
    main_locator: str | None
    blocks: list[FieldDict]  # Block
    regions: list[FieldDict]
    links: list[FieldDict]
    template_ids: NotRequired[list[str]]
    template_offsets: NotRequired[list[int]]
    headings: list[FieldDict]
    warnings: list[FieldDict]


class _Shared(TypedDict):
    """The lists both records of a page hold (`SHARED_FIELDS`), converted once."""

    links: list[FieldDict]
    template_ids: list[str]
    template_offsets: list[int]
    regions: list[FieldDict]
    headings: list[FieldDict]
    warnings: list[FieldDict]


def page_id(canonical_url: str) -> str:
    """`sha256:<hex>` of the canonical URL: the page's stable id."""
    return sha256_id(canonical_url)


def as_dict(obj: Any) -> FieldDict:
    """A slotted extraction dataclass as a dict of its fields, one level deep.

    `dataclasses.asdict` deep-copies every value; records are serialized at once and
    never changed, so the field values (strings, lists of strings) are shared instead.
    Nested dataclasses (`VersionInfo.evidence`) are converted too.
    """
    return _converter(type(obj))(obj)


def as_dicts(items: list[Any]) -> list[FieldDict]:
    """`as_dict` of each item (extraction's lists hold one class: its converter is
    looked up once)."""
    if not items:
        return []
    kind = type(items[0])
    convert = _converter(kind)
    return [convert(item) if type(item) is kind else as_dict(item) for item in items]


# `as_dict` for each class met, made once (a page converts some 300 objects of a handful)
_CONVERTERS: dict[type, Callable[[Any], FieldDict]] = {}


def _converter(kind: type) -> Callable[[Any], FieldDict]:
    """`as_dict` for one class: its field names read once, and the fields whose type is
    a list of dataclasses converted too (the others are shared as they are)."""
    convert = _CONVERTERS.get(kind)
    if convert is None:
        convert = _CONVERTERS[kind] = _make_converter(kind)
    return convert


def _make_converter(kind: type) -> Callable[[Any], FieldDict]:
    names: tuple[str, ...] = tuple(kind.__slots__)  # type: ignore[attr-defined]
    hints = get_type_hints(kind)
    nested = tuple(name for name in names if _dataclass_list(hints.get(name)))
    if not nested:
        return lambda obj: {name: getattr(obj, name) for name in names}

    def convert(obj: Any) -> FieldDict:
        out = {name: getattr(obj, name) for name in names}
        for name in nested:
            out[name] = as_dicts(out[name])
        return out
    return convert


def _dataclass_list(hint: Any) -> bool:
    """True for a `list[X]` type whose X is a dataclass."""
    args = get_args(hint)
    return get_origin(hint) is list and len(args) == 1 and is_dataclass(args[0])


# Fields pages.jsonl and structure.jsonl both hold, as the same (shared) lists.
SharedField = Literal["links", "template_ids", "template_offsets", "regions", "headings",
                      "warnings"]
SHARED_FIELDS: tuple[SharedField, ...] = ("links", "template_ids", "template_offsets",
                                          "regions", "headings", "warnings")


def page_records(page: FetchedPage,
                 keep: Callable[[str, TemplateBlock], bool] | None = None,
                 ) -> tuple[PageRecord, StructureRecord, list[TemplateBlock]]:
    """The page's pages.jsonl and structure.jsonl lines, and the template blocks they
    reference (`export.templates`: the links of the page's template regions, written
    once per site, those `keep` chooses; None keeps every link inline). The lists both
    records hold (SHARED_FIELDS) are converted once and shared."""
    links = as_dicts(page.extracted.links)
    blocks: list[TemplateBlock] = []
    offsets: list[int] = []
    if keep is not None:
        candidates = [r.locator for r in page.extracted.regions if r.region != "main_content"]
        links, blocks, offsets = split_links(links, candidates, keep)
    shared: _Shared = {
        "links": links,
        "template_ids": [block.template_id for block in blocks],
        "template_offsets": offsets,
        "regions": as_dicts(page.extracted.regions),
        "headings": as_dicts(page.extracted.headings),
        "warnings": as_dicts(page.extracted.warnings) + page.warnings,
    }
    record = _page_record(page, shared)
    structure = _structure_record(page, shared, record["id"])
    if not blocks:  # no template block: the records as before (no empty fields to carry)
        for fields in (record, structure):
            del fields["template_ids"], fields["template_offsets"]
    return record, structure, blocks


def _page_record(page: FetchedPage, shared: _Shared) -> PageRecord:
    """One pages.jsonl line, as in the contract."""
    ext = page.extracted
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


def _structure_record(page: FetchedPage, shared: _Shared, ident: str) -> StructureRecord:
    """One structure.jsonl line: the page's block tree, regions, links, headings, warnings
    (`ident`: the page's id, hashed once for both records)."""
    ext = page.extracted
    assert page.canonical_url is not None
    return {
        "page_id": ident,
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
