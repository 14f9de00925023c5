"""Aggregate pages: a page whose main content is the concatenation of other pages.

Print views (mdBook `print.html`), single-page builds (Sphinx `singlehtml`) and "all on one
page" manuals repeat every chapter: kept as ordinary pages, every chunk exists twice and
the long page outranks the chapter in search. The decision comes from content, never
from the file name: each page is reduced to the hashes of its long paragraphs (link
destinations dropped, whitespace and case folded). A page contains another when it holds
at least two of that page's sample paragraphs (first, middle, last; all of them when it
has fewer); it is an aggregate when it contains at least `MIN_PARTS` pages whose text
makes up at least `MIN_COVER` of its own. Sample paragraphs that more than two pages share
are template text (a feature note, stock trait documentation), and so are paragraphs more
than two of the longest pages hold: they identify nothing.

Every page keeps its 1-3 sample hashes: in the crawl's ledger, on disk (`samples`,
`by_hash`: about 1.4 KB per page as Python objects); only the `MAX_CANDIDATES` longest
pages (the only ones that can contain several others) keep all their hashes, in memory.
The verdict is drawn once, at the end of the crawl (the chapters may come after the print
view), then confirmed by reading the parts whole (`confirm`: they must hold 90% of the
aggregate's text), and the written records follow (`docscrawl.crawl.finish`).
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable, MutableMapping
from typing import Any

__all__ = ["AggregateTracker", "paragraph_hashes"]

MIN_PARAGRAPH_CHARS = 60
MIN_CANDIDATE_PARAGRAPHS = 6
MAX_CANDIDATES = 64
MIN_PARTS = 2
MIN_COVER = 0.6
MIN_HELD = 0.9  # share of an aggregate's own text its parts, read whole, must hold
# A sample paragraph found among the samples of more pages than this is template text (an
# aggregate and the page it copies share it: two; a third page makes it template).
MAX_SHARING = 2
_LINK_DESTINATION = re.compile(r"\]\([^)\s]*(?:\s+\"[^\"]*\")?\)")


def paragraph_hashes(markdown: str) -> list[tuple[int, int]]:
    """(hash, length) of each long prose or code block of a page's Markdown, in order."""
    found: list[tuple[int, int]] = []
    for block in markdown.split("\n\n"):
        block = block.strip()
        if not block or block[0] == "#":
            continue  # headings may change level in a print view
        if len(block) < MIN_PARAGRAPH_CHARS and block.isascii():
            continue  # folding links and spaces only shortens it (casefold keeps ASCII's length)
        if "](" in block:
            block = _LINK_DESTINATION.sub("]", block)
        # runs of whitespace as one space: the block is stripped, and a destination dropped
        # leaves `]` at its ends, so `split` (`str.isspace`, as `\s`) joins the same text
        text = " ".join(block.split()).casefold()
        if len(text) >= MIN_PARAGRAPH_CHARS:
            digest = hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest()
            found.append((int.from_bytes(digest, "big"), len(text)))
    return found


def _sample(hashes: list[tuple[int, int]]) -> tuple[int, ...]:
    if len(hashes) <= 3:
        return tuple(h for h, _ in hashes)
    return (hashes[0][0], hashes[len(hashes) // 2][0], hashes[-1][0])


class AggregateTracker:
    """Fed every written page; tells at the end which pages aggregate which."""

    def __init__(self, *, max_candidates: int = MAX_CANDIDATES,
                 samples: MutableMapping[str, Any] | None = None,
                 by_hash: MutableMapping[str, Any] | None = None) -> None:
        """`samples` and `by_hash`: where the per-page hashes go (the ledger's JSON maps in
        a crawl, `DedupState`; dicts by default)."""
        self.max_candidates = max_candidates
        # url -> (sample, chars); sample hash (as a string) -> the urls whose sample has it
        self.samples: MutableMapping[str, Any] = samples if samples is not None else {}
        self.by_hash: MutableMapping[str, Any] = by_hash if by_hash is not None else {}
        self.candidates: dict[str, tuple[dict[int, int], int]] = {}  # hash -> position
        self.sizes: dict[str, dict[int, int]] = {}  # candidate -> hash -> its text length

    def observe(self, url: str, markdown: str) -> None:
        hashes = paragraph_hashes(markdown)
        if not hashes:
            return
        chars = sum(n for _, n in hashes)
        sample = _sample(hashes)
        self.samples[url] = (sample, chars)
        for digest in set(sample):
            key = str(digest)
            self.by_hash[key] = [*self.by_hash.get(key, ()), url]  # stored again: a ledger map
        if len(hashes) >= MIN_CANDIDATE_PARAGRAPHS:
            positions: dict[int, int] = {}
            sizes: dict[int, int] = {}
            for index, (digest, size) in enumerate(hashes):
                positions.setdefault(digest, index)
                sizes[digest] = sizes.get(digest, 0) + size
            self.candidates[url], self.sizes[url] = (positions, chars), sizes
            if len(self.candidates) > self.max_candidates:
                smallest = min(self.candidates, key=lambda u: self.candidates[u][1])
                del self.candidates[smallest], self.sizes[smallest]

    def verdicts(self) -> dict[str, list[str]]:
        """Aggregate page URL -> the pages it contains, in the order it holds them.

        A sample paragraph that several pages share (template text: a feature note, a
        trait method's stock documentation) identifies none of them and is not counted."""
        found: dict[str, list[str]] = {}
        in_candidates = Counter(d for hashes, _ in self.candidates.values() for d in hashes)
        shared = {digest for digest, n in in_candidates.items() if n > MAX_SHARING}
        shared |= {int(digest) for digest, urls in self.by_hash.items()
                   if len(urls) > MAX_SHARING}
        for url, (hashes, chars) in self.candidates.items():
            hits: dict[str, int] = {}
            for digest in hashes:
                if digest in shared:
                    continue
                for other in self.by_hash.get(str(digest), ()):
                    if other != url:
                        hits[other] = hits.get(other, 0) + 1
            parts = [other for other, n in hits.items()
                     if n >= self._needed(other, shared) and self.samples[other][1] < chars]
            covered = sum(self.samples[other][1] for other in parts)
            if len(parts) >= MIN_PARTS and covered >= MIN_COVER * chars:
                found[url] = sorted(parts, key=lambda other: min(
                    hashes.get(h, len(hashes)) for h in self.samples[other][0]))
        return found

    def _needed(self, url: str, shared: set[int]) -> int:
        """Hits on a page's own (not shared) sample paragraphs that make an aggregate hold
        it: two, or one for a page with a single sample; none of its own: never held."""
        sample = set(self.samples[url][0])
        if not sample - shared:
            return len(sample) + 1  # more than any count of hits
        return 1 if len(sample) == 1 else 2

    def confirm(self, verdicts: dict[str, list[str]],
                pages: Iterable[tuple[str, str]]) -> dict[str, list[str]]:
        """The verdicts whose parts, read whole (`pages`: URL and Markdown of the written
        pages, streamed once), hold at least `MIN_HELD` of the aggregate's own text. A
        page that re-exports other pages' items among text of its own (a Haddock module
        re-exporting four others) is not a print view."""
        wanted = {part for parts in verdicts.values() for part in parts}
        held: dict[str, set[int]] = {}
        for url, markdown in pages:
            if url in wanted:
                held[url] = {digest for digest, _ in paragraph_hashes(markdown)}
        confirmed: dict[str, list[str]] = {}
        for url, parts in verdicts.items():
            sizes = self.sizes[url]
            union = set().union(*(held.get(part, set()) for part in parts))
            inside = sum(size for digest, size in sizes.items() if digest in union)
            if inside >= MIN_HELD * sum(sizes.values()):
                confirmed[url] = parts
        return confirmed
