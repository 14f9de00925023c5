"""Value types produced by extraction. Pure data: no Scrapy, no I/O.

Field names follow ../shared/CONTRACT.md; `export` turns these into JSON lines.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field, fields
from typing import Any, TypeVar

_Class = TypeVar("_Class", bound=type)

REGIONS = (
    "main_content",
    "primary_navigation",
    "sidebar_navigation",
    "table_of_contents",
    "breadcrumb",
    "pagination",
    "footer_navigation",
    "related_content",
    "unknown",
)
GENERATORS = (
    "sphinx", "mkdocs", "docusaurus", "vitepress", "mdbook", "rustdoc", "javadoc", "docbook",
    "hugo", "gitbook", "antora", "starlight", "docsify", "redoc", "other",
)
CODE_KINDS = ("command", "output", "config", "source", "unknown")
LINK_CONTAINERS = ("paragraph", "list_item", "table", "card", "heading", "navigation", "other")
LINK_TARGETS = ("internal", "external", "fragment", "asset")


def pickled_by_fields(cls: _Class) -> _Class:
    """Pickle a dataclass's instances as its constructor's arguments (`cls(*values)`).

    A page's extraction crosses a process boundary (`crawl.pool`) as a few hundred of
    these; `dataclasses`' own pickling of a slots class calls `fields()` per object and
    `object.__setattr__` per field, in Python: about twice the CPU each way
    (docs/performance.md). For dataclasses whose every field is an `__init__` argument and
    whose construction does nothing more (no `__post_init__`)."""
    found = fields(cls)
    names = [f.name for f in found]
    if not names or any(not f.init for f in found) or hasattr(cls, "__post_init__"):
        raise TypeError(f"{cls.__name__}: not rebuilt by its constructor's arguments alone")
    values = operator.attrgetter(*names)
    if len(names) == 1:
        def reduce(self: Any) -> tuple[type, tuple[Any, ...]]:
            return cls, (values(self),)
    else:
        def reduce(self: Any) -> tuple[type, tuple[Any, ...]]:
            return cls, values(self)
    setattr(cls, "__reduce__", reduce)  # noqa: B010 (mypy refuses a method assigned)
    return cls


@pickled_by_fields
@dataclass(slots=True)
class ExtractionWarning:
    """A quality flag on a page: `code` from a small vocabulary, `detail` for humans."""

    code: str
    detail: str


@pickled_by_fields
@dataclass(slots=True)
class Heading:
    level: int
    text: str
    anchor: str | None
    path: list[str]  # ends with `text`


@pickled_by_fields
@dataclass(slots=True)
class CodeBlock:
    code: str  # exact text, whitespace kept
    language: str | None
    kind: str  # one of CODE_KINDS
    heading_path: list[str]
    context: str  # nearest explanatory prose
    block_ordinal: int


@pickled_by_fields
@dataclass(slots=True)
class Link:
    url: str  # absolute
    text: str
    rel: list[str]
    region: str  # one of REGIONS
    container: str  # one of LINK_CONTAINERS
    container_label: str | None
    heading_path: list[str]
    target: str  # one of LINK_TARGETS
    position: int  # order of the link in the page, from 0
    # Locator of the region element holding the link (`Region.locator`), so crawl-level
    # template verdicts (`templates.apply_reclassifications`) can relabel its links.
    region_locator: str | None = None


@pickled_by_fields
@dataclass(slots=True)
class Region:
    region: str  # one of REGIONS
    locator: str  # stable locator of the element (XPath of the element in the parsed tree)
    link_count: int
    text_chars: int
    # Link-set digest (`regions.region_signature`): equal on pages sharing the region's
    # links; None for the main content. `templates.TemplateTracker` compares them.
    signature: str | None = None
    # True for a block of the main element the site repeats on most pages
    # (`template.table.template_blocks`): left out of the Markdown, headings and chunks.
    template: bool = False


@pickled_by_fields
@dataclass(slots=True)
class Block:
    """One block-level element of the main content, in document order."""

    ordinal: int
    kind: str  # heading, paragraph, list, table, code, blockquote, callout, definition_list,
    #            image, rule, other
    markdown: str
    heading_path: list[str]
    anchor: str | None  # id of the nearest heading that has one (for citations)
    locator: str
    text_chars: int
    # Ordinal of the enclosing block: the heading block that opens this block's section
    # (a heading's parent is the heading one level up its path); None at the top.
    parent: int | None = None
    id: str = ""  # `b<ordinal>`: unique in the page
    type: str = ""  # = kind (the structure.jsonl name)
    region: str = "main_content"  # region of the block (REGIONS)


@pickled_by_fields
@dataclass(slots=True)
class Breadcrumb:
    position: int
    label: str
    url: str | None


@pickled_by_fields
@dataclass(slots=True)
class VersionEvidence:
    source: str  # url, canonical, selector, banner, meta, sidebar, title
    value: str
    site: bool = False  # a signal every page of the site shares (`extract/site_versions.py`)
    # Where a site signal was read ("home link title", "version label"...); None for the
    # page's own evidence, whose `source` says it.
    where: str | None = None


@pickled_by_fields
@dataclass(slots=True)
class VersionInfo:
    value: str | None = None
    status: str = "unversioned"  # consistent, inferred, conflicting, unversioned
    evidence: list[VersionEvidence] = field(default_factory=list)


@pickled_by_fields
@dataclass(slots=True)
class DiscoveredLink:
    """A link worth following, labelled by the page region it sits in."""

    url: str  # absolute, fragment dropped
    text: str
    region: str  # one of REGIONS


@pickled_by_fields
@dataclass(slots=True)
class PageExtract:
    """Everything extraction learns from one parsed page."""

    title: str | None = None
    main_heading: str | None = None
    description: str | None = None
    language: str | None = None
    generator: str | None = None
    canonical_href: str | None = None  # rel=canonical, absolute, as written (not yet checked)
    markdown: str = ""
    headings: list[Heading] = field(default_factory=list)
    # Ids of the other elements of the main content (a glossary term, a grammar token, an
    # option): a `#fragment` naming one lands on the page too (`page.fragment_ids`).
    fragment_ids: list[str] = field(default_factory=list)
    code_blocks: list[CodeBlock] = field(default_factory=list)
    links: list[Link] = field(default_factory=list)
    regions: list[Region] = field(default_factory=list)
    blocks: list[Block] = field(default_factory=list)
    breadcrumbs: list[Breadcrumb] = field(default_factory=list)
    breadcrumb_source: str = "none"  # visible, jsonld, visible-and-jsonld, none
    breadcrumb_observations: dict[str, list[Breadcrumb]] = field(
        default_factory=lambda: {"visible": [], "jsonld": []}
    )
    navigation_path: list[str] = field(default_factory=list)
    section_path: list[str] = field(default_factory=list)
    version: VersionInfo = field(default_factory=VersionInfo)
    warnings: list[ExtractionWarning] = field(default_factory=list)
    main_locator: str | None = None
    # Signatures of the blocks at the edges of the main content, before template blocks
    # were left out (`template.table.page_signatures`): what the crawl feeds its TemplateTable.
    signatures: list[int] = field(default_factory=list)
