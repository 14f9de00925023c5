"""A ranked search result: its hits, each with the citation fields every output prints
(the CLI, `context`, MCP, the loaders), and the version scope the search used."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


def section_label(meta: dict[str, Any]) -> str:
    """`title › heading › path`; a first heading the title already starts with (Sphinx:
    "Jobs — Scrapy 2.8 documentation" over "Jobs") is not repeated."""
    title = str(meta.get("title") or "Untitled")
    path = [str(h) for h in meta.get("heading_path") or []]
    if path and title.startswith(path[0]):
        path = path[1:]
    return " › ".join([title, *path])


@dataclass
class Hit:
    """One ranked chunk with its citation fields."""
    score: float
    record: dict[str, Any]
    page_aggregate_of: list[str] = field(default_factory=list)

    @property
    def meta(self) -> dict[str, Any]:
        return self.record.get("metadata") or {}

    def anchor(self) -> str | None:
        meta = self.meta
        if meta.get("anchor"):
            return str(meta["anchor"])
        source = str(meta.get("source_url") or "")
        return source.split("#", 1)[1] if "#" in source else None

    def url(self) -> str:
        base = str(self.meta.get("canonical_url") or self.meta.get("source_url") or "")
        anchor = self.anchor()
        return f"{base}#{anchor}" if anchor else base

    def citation(self) -> str:
        meta = self.meta
        section = section_label(meta)
        version = meta.get("version")
        date = str(meta.get("retrieved_at") or "")[:10]
        parts = [section, f"version {version}" if version else "unversioned", self.url()]
        if date:
            parts.append(f"retrieved {date}")
        return ", ".join(parts)

    def as_json(self) -> dict[str, Any]:
        meta = self.meta
        return {
            "url": self.url(),
            "title": meta.get("title"),
            "heading_path": meta.get("heading_path") or [],
            "breadcrumbs": meta.get("breadcrumbs") or [],
            "version": meta.get("version"),
            "retrieved_at": meta.get("retrieved_at"),
            "content_hash": meta.get("content_hash"),
            "chunk_id": self.record.get("id"),
            "score": round(self.score, 6),
            "text": self.record.get("markdown") or self.record.get("text") or "",
            "citation": self.citation(),
            "sections": meta.get("sections") or [],
            "inbound_count": meta.get("inbound_count", 0),
        }


@dataclass
class Result:
    """Ranked hits and what version scope was used."""
    hits: list[Hit]
    version: str | None
    version_source: str   # "filter", "query", "default", "none"
    aliases: list[str] = field(default_factory=list)  # other names of the default
    match: float = 0.0    # match_strength of the best results
    no_good_match: bool = False  # match under the threshold: the hits are only the nearest

    def match_note(self) -> str | None:
        """One line when the results found answer badly, else None."""
        if not self.no_good_match or not self.hits:
            return None
        return (f"no good match: the results hold little of the query (match "
                f"{self.match:.2f}); the nearest follow")

    def note(self) -> str:
        if self.version_source == "filter":
            return f"version {self.version} (--version)"
        if self.version_source == "query":
            return f"version {self.version} (named in the query)"
        if self.version_source == "default":
            same = f" (also served as {', '.join(self.aliases)})" if self.aliases else ""
            return f"preferring version {self.version}, the site's default{same}"
        if self.version:
            return f"version {self.version} (the only one in the index)"
        return "no version information"
