"""Citation precision of chunks, for `docscrawl check` (checks 7 and 8).

7. section precision: share of chunks whose Markdown (code fences left out) holds a heading
   that neither the chunk's `heading_path` nor its `sections` name, so a citation of the
   chunk points at the wrong section;
8. plain headings: headings in chunk Markdown written as a link (`## [Install](url#install)`),
   which puts a URL into the text that labels and embeddings see.

`ChunkScan` gathers both while `docscrawl.inspect.check` streams chunks.jsonl once.
"""

from __future__ import annotations

import re
from typing import Any

from docscrawl.inspect.output import EXAMPLES

__all__ = ["ChunkScan", "chunk_headings"]

_FENCE = re.compile(r"^(`{3,}|~{3,}).*?^\1[ \t]*$", re.M | re.S)
_HEADING = re.compile(r"^#{1,6} +(.+?) *#*$", re.M)
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_LINK_HEADING = re.compile(r"\[.*\]\([^)]*\)")


def _norm(text: str) -> str:
    """Heading text as its path names it: links as their text, markers and escapes gone."""
    text = _LINK.sub(r"\1", text).replace("¶", "").replace("\\", "")
    return " ".join(text.split())


def chunk_headings(markdown: str) -> list[str]:
    """ATX headings of a chunk's Markdown, outside code fences."""
    return _HEADING.findall(_FENCE.sub("", markdown))


class ChunkScan:
    """What checks 7 and 8 need from chunks.jsonl."""

    def __init__(self) -> None:
        self.chunks = 0
        self.unnamed = 0
        self.unnamed_examples: list[dict[str, Any]] = []
        self.headings = 0
        self.linked = 0
        self.linked_examples: list[dict[str, Any]] = []

    def add(self, chunk: dict[str, Any]) -> None:
        meta = chunk.get("metadata") or {}
        if meta.get("region") not in (None, "main_content"):
            return
        self.chunks += 1
        headings = chunk_headings(str(chunk.get("markdown") or ""))
        if not headings:
            return
        named = {_norm(str(h)) for h in meta.get("heading_path") or ()}
        for section in meta.get("sections") or ():
            if isinstance(section, dict):
                named.update(_norm(str(h)) for h in section.get("heading_path") or ())
        unnamed = [h for h in headings if _norm(h) not in named]
        if unnamed:
            self.unnamed += 1
            if len(self.unnamed_examples) < EXAMPLES:
                self.unnamed_examples.append({
                    "chunk": chunk.get("id"), "url": meta.get("source_url"),
                    "heading_path": " > ".join(meta.get("heading_path") or ()),
                    "unnamed": unnamed[0]})
        self.headings += len(headings)
        for heading in headings:
            if _LINK_HEADING.fullmatch(heading.strip()):
                self.linked += 1
                if len(self.linked_examples) < EXAMPLES:
                    self.linked_examples.append({"chunk": chunk.get("id"),
                                                 "url": meta.get("source_url"),
                                                 "heading": heading})
