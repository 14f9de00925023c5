"""What the spider hands to the item pipelines (one fetched HTML page, parsed once; a page
carried over), and how a stage ends a page's story early (`PageEnded`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from scrapy.exceptions import DropItem

from docscrawl.discovery.pagetrack import PageTrack

if TYPE_CHECKING:
    from lxml import etree

    from docscrawl.extract.model import PageExtract
    from docscrawl.extract.page import PageStructure
    from docscrawl.incremental.carry import CarriedLines
    from docscrawl.incremental.rows import StateRow


@dataclass(slots=True, repr=False)
class FetchedPage:
    """A fetched HTML page with its provenance; `root` is the one parsed tree."""

    track: PageTrack
    final_url: str
    status: int
    content_type: str
    etag: str | None
    last_modified: str | None
    fetch_mode: str  # http or browser
    retrieved_at: str
    root: etree._Element | None  # the parsed page (parsel Selector.root)
    elapsed_ms: float | None = None
    size: int | None = None
    render_reason: str | None = None
    structure: PageStructure | None = None  # computed by the spider for link discovery
    body_digest: str | None = None  # hash of the raw body (incremental state)
    extract: PageExtract | None = None  # set by the extract stage, dropped once written
    content_hash: str | None = None
    canonical_url: str | None = None
    warnings: list[dict[str, str]] = field(default_factory=list)
    # the links discovery followed from the page, (URL, reason, navigation rank): stored
    # for the re-crawl
    found_links: list[tuple[str, str, int]] | None = None
    # locators of the page's regions the template learner found repeated across pages
    # (`extract.template.pipeline`): their links go to templates.jsonl (`export.templates`)
    template_locators: frozenset[str] = frozenset()
    # extracted in a worker process (`crawl.pool`): `extract` (or `extract_error`) and the
    # site-version `signals` came with it (None: the page was not sampled for them), and
    # `root` and `structure` are None
    pooled: bool = False
    extract_error: str | None = None
    signals: set[tuple[str, str, str]] | None = None

    @property
    def extracted(self) -> PageExtract:
        """`extract`, for the stages after extraction (which always set it)."""
        if self.extract is None:
            raise ValueError(f"{self!r} was not extracted (or was already written)")
        return self.extract

    def __repr__(self) -> str:
        return f"<FetchedPage {self.track.url} -> {self.final_url} ({self.status})>"


@dataclass(slots=True, repr=False)
class CarriedPage:
    """A page unchanged since the last crawl (304, or a byte-identical body): its lines
    are carried over from the previous output (`docscrawl.incremental.carry`), without
    extraction."""

    track: PageTrack
    row: StateRow
    lines: CarriedLines  # what is written again
    final_url: str
    status: int
    etag: str | None
    last_modified: str | None
    fetch_mode: str
    body_digest: str | None = None
    elapsed_ms: float | None = None
    size: int | None = None
    record: dict[str, Any] | None = None  # the stored page record, when already parsed
    found_links: list[tuple[str, str, int]] | None = None  # parsed again: its links
    parsed: bool = False  # parsed before it was found unchanged (same content hash)

    def __repr__(self) -> str:
        return f"<CarriedPage {self.track.url} ({self.status})>"


class PageEnded(DropItem):
    """A stage ended the page (failed, duplicate): its terminal event and the event's
    fields. The stages never write terminal events; the export stage writes every page's
    one (`ExportPipeline.ended`, on Scrapy's `item_dropped`)."""

    def __init__(self, message: str, event: str, **fields: Any) -> None:
        super().__init__(message, log_level="DEBUG")
        self.event = event
        self.fields = fields
