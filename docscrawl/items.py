"""What the spider hands to the item pipelines: one fetched HTML page, parsed once."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from docscrawl.frontier import PageTrack


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
    root: Any  # lxml root element of the parsed page (parsel Selector.root)
    elapsed_ms: float | None = None
    size: int | None = None
    render_reason: str | None = None
    structure: Any = None  # PageStructure computed by the spider for link discovery
    extract: Any = None  # PageExtract, set by the extract pipeline
    content_hash: str | None = None
    canonical_url: str | None = None
    warnings: list[dict[str, str]] = field(default_factory=list)

    def __repr__(self) -> str:
        return f"<FetchedPage {self.track.url} -> {self.final_url} ({self.status})>"
