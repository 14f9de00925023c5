"""Which chunk of a page each term the site's indexes and summaries give that page goes
to (`assign`): the place a link's fragment names, else the chunk that defines the term.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from docscrawl.search.sitevocab import MAX_CHARS
from docscrawl.search.tokenize import stem
from docscrawl.search.vocabread import norm


@dataclass
class ChunkView:
    """What assigning terms needs of one chunk of a page."""
    chunk_id: str
    heading_path: tuple[str, ...]
    anchors: list[str]
    markdown: str


def assign(chunks: list[ChunkView], fragments: dict[str, list[str]],
           heading_anchors: dict[str, tuple[str, ...]],
           labels: dict[str, set[str]] | None = None) -> dict[str, str]:
    """Chunk id -> its vocabulary text, for the chunks of one page (in page order).

    A fragment that is a chunk's anchor (or one of its sections') goes to that chunk; a
    heading anchor of a subsection merged into a chunk goes to the chunk whose heading
    path holds it; any other fragment to the chunk whose heading the index link's text
    names (DocBook links name the section: "disk space, [Recovering Disk Space]"), else
    (Sphinx `index-0`, an API member's id, Texinfo `index-core-dump`) to the first chunk
    with a heading or a line that starts with the term (a definition:
    "`format_help(ctx, formatter)`"), else that mentions it; no fragment (or none found)
    to the page's first chunk."""
    if not chunks:
        return {}
    text = _PageText(chunks)
    by_anchor: dict[str, ChunkView] = {}
    for first in chunks:  # a long section's chunks share its anchor: the first one
        for anchor in first.anchors:
            by_anchor.setdefault(anchor, first)
    given: dict[str, list[str]] = {}
    for fragment, found in fragments.items():
        chunk = by_anchor.get(fragment) if fragment else chunks[0]
        if chunk is None and fragment in heading_anchors:
            path = heading_anchors[fragment]
            owners = [c for c in chunks if path[:len(c.heading_path)] == c.heading_path]
            chunk = max(owners, key=lambda c: len(c.heading_path)) if owners else None
        if chunk is None and fragment:
            # no scan of the page's chunks without a name (most of a genindex's fragments:
            # Flask's assignment took 0.074 s of CPU with the scan, 0.051 s without)
            names = tuple(n for n in map(norm, (labels or {}).get(fragment, ())) if len(n) >= 4)
            if names:   # "25.1.4. ..."
                chunk = next((c for c, head in zip(chunks, text.heads, strict=True)
                              if head and head.endswith(names)), None)
        if chunk is None:
            chunk = _mentioning(chunks, text, fragment, found) or chunks[0]
        given.setdefault(chunk.chunk_id, []).extend(found)
    result = {}
    by_id = {c.chunk_id: c for c in chunks}
    for chunk_id, found in given.items():
        kept, size = [], 0
        own = _stems(" ".join([*by_id[chunk_id].heading_path, by_id[chunk_id].markdown]))
        for entry in dict.fromkeys(found):
            # only the words the chunk does not say itself: those it says already count
            # in its own text, and would count twice
            term = " ".join(w for w in re.findall(r"[^\W_]+", entry)
                            if stem(w.casefold()) not in own)
            if not term or term in kept:
                continue
            if size + len(term) > MAX_CHARS:
                break
            kept.append(term)
            size += len(term) + 1
        result[chunk_id] = "\n".join(kept)
    return result


def _stems(text: str) -> set[str]:
    """The stemmed words of a text (identifiers by their parts: `accept_content`)."""
    return {stem(w) for w in re.findall(r"[^\W_]+", text.casefold())}


def _keys(fragment: str, terms: list[str]) -> list[str]:
    """The words a chunk defining this place would show: the fragment's last part
    (`click.Command.format_help` -> `format_help`) and each term's head."""
    keys = [re.sub(r"^index-", "", re.split(r"[.:/]", fragment)[-1])] if fragment else []
    keys += [re.sub(r"\(\)$", "", t.split(" (")[0].split(",")[0]).strip() for t in terms]
    return [k.casefold() for k in dict.fromkeys(keys) if len(k) >= 3
            and not re.fullmatch(r"(index|id)?[-_]?\d*", k, re.I)]


_FIRST_WORD = re.compile(r"[^\W]+")


class _PageText:
    """A page's chunks as `_mentioning` reads them, folded once per page."""

    def __init__(self, chunks: list[ChunkView]) -> None:
        self.heads = [norm(c.heading_path[-1]) if c.heading_path else "" for c in chunks]
        self.folded = [c.markdown.casefold() for c in chunks]
        # first word of a line -> (chunk, line), in page order: who opens a line with a key
        self.openers: dict[str, list[tuple[int, str]]] = {}
        for i, folded in enumerate(self.folded):
            for line in folded.splitlines():
                line = line.lstrip("#`*-: >")
                first = _FIRST_WORD.match(line)
                if first:
                    self.openers.setdefault(first.group(), []).append((i, line))


def _mentioning(chunks: list[ChunkView], text: _PageText, fragment: str,
                terms: list[str]) -> ChunkView | None:
    """The chunk that defines a place best: a heading named by the key (Celery's
    settings: `std-setting-accept_content` under the heading "accept_content"), else a
    line opening with it (a signature), else the first mention."""
    keys = _keys(fragment, terms)
    if not keys:
        return None
    for key in keys:
        normed = norm(key)
        for chunk, head in zip(chunks, text.heads, strict=True):
            if normed and head.startswith(normed):
                return chunk
    for key in keys:
        first = _FIRST_WORD.match(key)
        for i, line in text.openers.get(first.group() if first else "", ()):
            if line.startswith(key):
                return chunks[i]
    for key in keys:
        word = re.compile(rf"(?<![\w.]){re.escape(key)}(?!\w)")  # "cos", not "cost"
        for chunk, folded in zip(chunks, text.folded, strict=True):
            if key in folded and word.search(folded):
                return chunk
    return None
