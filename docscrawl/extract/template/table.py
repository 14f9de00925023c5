"""What the crawl learns about a site from its pages: the blocks its template repeats.

A generator's template can sit inside the element chosen as main content (a Sphinx theme's
header with the site title as `h1` and a bar of links, mdBook's menu bar, a footer, a
previous/next bar). No page shows that on its own; the site does, by repeating it. Each
page contributes the signatures of the blocks at the edges of its main content and of
the prose between them (`page_signatures`); `TemplateTable` counts on how many pages each
signature occurs. A block whose signature occurs on most pages is template: extraction
leaves it out of the main content, the heading paths and the chunks (`template_blocks`),
and records it as a region with `template: true`.

The signatures of a block:

- content: the block's kind and normalized Markdown (text and link targets), and for a
  block with links its text alone (a banner "for the development docs, go here" links
  to each page's own counterpart);
- shape, for short link-dominated blocks other than headings only: its kind, the tag
  path from the main element without positions, and its position from the edge (a
  previous/next bar whose link texts change on every page keeps its place and shape);
- items, for a link-dominated list: the content and text signatures of each top-level
  item. A menu bar written as one list mixes items every page repeats with items of the
  page's own (Node.js's API docs: a version label, the site index, other versions and an
  edit link around a picker holding the page's own table of contents), so the list as a
  whole repeats nowhere; it is template when at least two thirds of its items (two or
  more) are (`ITEM_SHARE`).

The table is fed once per page (`observe`, idempotent per page), read by pure extractors
(`is_template`), kept in the crawl state (`docscrawl.incremental.site_model.SiteModel`), shared by
the
workers of a distributed crawl (`docscrawl.distributed.template_counts`) and bounded: at most
`max_signatures` counters, the least-seen half forgotten when full (template signatures,
seen on most pages, stay).

    table = TemplateTable()
    extract = extract_page(root, url, template_table=table)   # reads it
    table.observe(extract.signatures)                          # feeds it
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from docscrawl.extract.md_text import collapse
from docscrawl.extract.model import Block

__all__ = ["SharedCounts", "Signed", "TemplateBlock", "TemplateTable", "list_items", "page_key",
           "page_signatures", "sign_blocks", "template_blocks"]

EDGE_BLOCKS = 32  # blocks at each end of the main content that are signed
INNER_KINDS = frozenset({"paragraph", "list", "callout", "blockquote", "other"})
INNER_MIN_CHARS = 15  # shorter prose ("Returns", "See also") repeats legitimately
SHAPE_MAX_CHARS = 300  # a link bar is short
SHAPE_LINK_SHARE = 0.6  # and mostly link text
_LINK = re.compile(r"\[([^\]]*)\]\(([^)]*)\)")
_POSITION = re.compile(r"\[\d+\]")
_WS = re.compile(r"\s+")


def _digest(*parts: str) -> int:
    data = "\x1f".join(parts).encode("utf-8", "surrogatepass")
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "big")


def link_share(markdown: str) -> tuple[int, float]:
    """(links, share of the visible text that is link text) of a block's Markdown."""
    links, share, _ = _link_parts(markdown)
    return links, share


def _link_parts(markdown: str) -> tuple[int, float, str]:
    """`link_share`'s two figures and the Markdown with each link replaced by its text,
    from one split (a substitution calls back into Python for every link on Python 3.11)."""
    parts = _LINK.split(markdown)  # text, (link text, destination, text)...
    if len(parts) == 1:
        return 0, 0.0, markdown
    texts = parts[1::3]
    unlinked = "".join(part for i, part in enumerate(parts) if i % 3 != 2)
    link_chars = sum(len(text.strip()) for text in texts)
    visible = len(unlinked.strip())
    return len(texts), (link_chars / visible if visible else 0.0), unlinked


def _shape(block: Block, main_locator: str | None) -> str:
    path = block.locator
    if main_locator and path.startswith(main_locator):
        path = path[len(main_locator):]
    return _POSITION.sub("", path)


def block_signatures(block: Block, edges: tuple[str, ...],
                     main_locator: str | None) -> tuple[int, ...]:
    """The signatures of one edge block (`edges` like ("head0", "tail3"))."""
    text = collapse(block.markdown)
    signatures = [_digest("c", block.kind, text)]
    if "](" not in text:
        return tuple(signatures)
    links, share, unlinked = _link_parts(text)
    if links:  # the same words whose links point at the page's own counterpart elsewhere
        signatures.append(_digest("t", block.kind, unlinked))
    if (block.kind != "heading" and links and share >= SHAPE_LINK_SHARE
            and len(text) <= SHAPE_MAX_CHARS):  # a title linking to its page is no bar
        shape = _shape(block, main_locator)
        signatures.extend(_digest("s", block.kind, shape, edge) for edge in edges)
    return tuple(signatures)


ITEM_SHARE = 2 / 3  # template items a link-dominated list needs to be template
_ITEM_START = re.compile(r"^(?:[-*+]|\d+[.)])\s")


def list_items(markdown: str) -> list[str]:
    """The top-level items of a list block's Markdown (nested items stay in theirs)."""
    items: list[list[str]] = []
    for line in markdown.splitlines():
        if _ITEM_START.match(line) or not items:
            items.append([line])
        else:
            items[-1].append(line)
    return [collapse("\n".join(item)) for item in items]


def item_signatures(block: Block) -> tuple[tuple[int, ...], ...]:
    """The signatures of each top-level item of a link-dominated list (else none)."""
    if block.kind != "list" or "](" not in block.markdown:
        return ()
    items = list_items(block.markdown)
    if len(items) < 2 or link_share(_WS.sub(" ", block.markdown))[1] < SHAPE_LINK_SHARE:
        return ()
    out = []
    for item in items:
        signatures = [_digest("i", item)]
        if "](" in item:
            signatures.append(_digest("it", _link_parts(item)[2]))
        out.append(tuple(signatures))
    return tuple(out)


def _signed(blocks: list[Block]) -> list[tuple[tuple[str, ...], Block]]:
    """The blocks that are signed, with their places from each end: those within
    EDGE_BLOCKS of either end, and prose blocks between them (`_inner_candidate`)."""
    n = len(blocks)
    out = []
    for i, block in enumerate(blocks):
        j = n - 1 - i
        edges = (*((f"head{i}",) if i < EDGE_BLOCKS else ()),
                 *((f"tail{j}",) if j < EDGE_BLOCKS else ()))
        if edges or _inner_candidate(block):
            out.append((edges, block))
    return out


def _inner_candidate(block: Block) -> bool:
    """Blocks that may be template away from the edges: prose of some length (the same
    inherited method doc on every rustdoc type page), never a heading or code."""
    return block.kind in INNER_KINDS and block.text_chars >= INNER_MIN_CHARS


class Signed(dict[int, tuple[int, ...]]):
    """Block ordinal -> the block's signatures; `by_item`: ordinal -> the signatures of
    each item of a list block (`item_signatures`)."""

    def __init__(self) -> None:
        super().__init__()
        self.by_item: dict[int, tuple[tuple[int, ...], ...]] = {}


def sign_blocks(blocks: list[Block], main_locator: str | None) -> Signed:
    """The signatures of a page's signed blocks, computed once per page."""
    signed = Signed()
    for edges, block in _signed(blocks):
        signed[block.ordinal] = block_signatures(block, edges, main_locator)
        if items := item_signatures(block):
            signed.by_item[block.ordinal] = items
    return signed


def page_signatures(signed: Signed) -> list[int]:
    """Distinct signatures of a page (what the TemplateTable counts)."""
    items = (s for per_block in signed.by_item.values() for item in per_block for s in item)
    blocks = (s for signatures in signed.values() for s in signatures)
    return list(dict.fromkeys([*blocks, *items]))


@dataclass(frozen=True, slots=True)
class TemplateBlock:
    """A block of the main content that the site repeats on most pages."""

    block: Block
    signature: int
    pages: int  # pages the signature was seen on
    at_end: bool  # in the trailing run (footer side) rather than the leading one


class SharedCounts(Protocol):
    """Counters several processes add to (distributed mode:
    `docscrawl.distributed.template_counts`)."""

    def add(self, key: int | None, signatures: Iterable[int], settles: Iterable[int] = ()
            ) -> bool: ...

    def snapshot(self) -> tuple[set[int], set[int], dict[int, int]]: ...

    def forget_below(self, pages: int) -> int: ...

    def sample(self, urls: list[str] | None = None) -> list[str] | None: ...


def page_key(signatures: Iterable[int]) -> int:
    """A page's identity for counting: the digest of its signature set. The same page
    seen twice (a duplicate URL, a re-delivered task, a re-crawl) counts once."""
    return _digest(*(f"{s:016x}" for s in sorted(set(signatures))))


class TemplateTable:
    """Counts edge-block signatures across the pages of one site; see the module doc.

    Each page counts once (`page_key`, or the key the caller gives), so the table depends
    on the set of pages seen, not on their order or on how often one was fetched. With
    `share_with(counts)` the counters live in a store every worker of a distributed crawl
    adds to; `refresh()` reads it back. `freeze()` fixes the verdicts: a crawl judges
    every page by one table (`docscrawl.extract.template.warmup`).
    """

    def __init__(self, *, min_pages: int = 6, share: float = 0.5,
                 max_signatures: int = 20_000, max_keys: int = 100_000) -> None:
        if min_pages < 2 or max_signatures < 2 or not 0 < share <= 1:
            raise ValueError("min_pages and max_signatures must be >= 2, share in (0, 1]")
        self.min_pages = min_pages
        self.share = share
        self.max_signatures = max_signatures
        self.max_keys = max_keys  # pages remembered as counted (beyond: counted again)
        self.pages = 0
        self._counts: dict[int, int] = {}
        self._keys: set[int] = set()
        self._settled: set[int] = set()  # other keys the caller marks done (`settle`)
        self._shared: SharedCounts | None = None
        self.frozen = False

    def __len__(self) -> int:
        return len(self._counts)

    @property
    def warm(self) -> bool:
        """True once enough pages were seen to call anything template."""
        return self.pages >= self.min_pages

    @property
    def shared(self) -> SharedCounts | None:
        """The shared counters, when the table has them."""
        return self._shared

    def share_with(self, counts: SharedCounts) -> None:
        """Count in `counts` (shared by every worker) from now on, starting from it."""
        self._shared = counts
        self.refresh()

    def refresh(self) -> None:
        """Read the shared counters back (no-op without them)."""
        if self._shared is not None and not self.frozen:
            self._keys, self._settled, self._counts = self._shared.snapshot()
            self.pages = len(self._keys)
            if len(self._counts) > self.max_signatures:
                self._forget()  # and in the store: keep what every worker keeps
                self._shared.forget_below(min(self._counts.values(), default=0))

    def freeze(self) -> None:
        """Fix the verdicts: from now on nothing is counted."""
        self.frozen = True

    def settled(self, key: int) -> bool:
        """True when `key` was marked done (`observe(..., settles=)` or `settle`)."""
        return key in self._settled

    def settle(self, key: int) -> None:
        """Mark `key` done without counting a page (a sample URL that failed)."""
        if not self.frozen and key not in self._settled:
            self._settled.add(key)
            if self._shared is not None:
                self._shared.add(None, (), (key,))

    def observe(self, signatures: Iterable[int], settles: Iterable[int] = ()) -> bool:
        """Count one page's (distinct) signatures and mark `settles` done; False when that
        page (`page_key` of its signatures) was counted, or the table is frozen."""
        distinct = set(signatures)
        key = page_key(distinct)
        settles = tuple(settles)
        if self.frozen:
            return False
        self._settled.update(settles)
        if key in self._keys:
            if self._shared is not None and settles:
                self._shared.add(None, (), settles)
            return False
        if len(self._keys) < self.max_keys:
            self._keys.add(key)
        if self._shared is not None and not self._shared.add(key, distinct, settles):
            return False  # another worker counted it (shared counters are the truth)
        self.pages += 1
        counts = self._counts
        for signature in distinct:
            counts[signature] = counts.get(signature, 0) + 1
        if len(counts) > self.max_signatures:
            self._forget()
        return True

    def count(self, signature: int) -> int:
        """Pages the signature was seen on."""
        return self._counts.get(signature, 0)

    def is_template(self, signature: int) -> bool:
        """True when the signature occurs on most pages of a warm model."""
        seen = self._counts.get(signature, 0)
        return self.warm and seen >= self.min_pages and seen >= self.share * self.pages

    def template_count(self) -> int:
        """How many signatures are template now."""
        return sum(1 for s in self._counts if self.is_template(s))

    def _forget(self) -> None:
        """Drop the least-seen half of the counters (bounded memory)."""
        keep = sorted(self._counts.items(), key=lambda item: item[1], reverse=True)
        self._counts = dict(keep[: self.max_signatures // 2])

    def to_json(self) -> dict[str, Any]:
        """The model as JSON values (hex signatures), for the crawl state. A frozen table
        counts nothing more, so only its template signatures' counts can change a verdict:
        the rest is not kept (a one-page site's 1,200 signatures seen once were 20 KB)."""
        frozen = self.frozen
        return {"pages": self.pages, "min_pages": self.min_pages, "share": self.share,
                "frozen": frozen,
                "counts": {f"{s:016x}": n for s, n in self._counts.items()
                           if not frozen or self.is_template(s)},
                "keys": [] if frozen else [f"{k:016x}" for k in sorted(self._keys)],
                "settled": [] if frozen else [f"{k:016x}" for k in sorted(self._settled)]}

    @classmethod
    def from_json(cls, data: dict[str, Any], *, max_signatures: int = 20_000) -> TemplateTable:
        """A model saved by `to_json`; raises ValueError on a malformed one."""
        try:
            model = cls(min_pages=int(data["min_pages"]), share=float(data["share"]),
                        max_signatures=max_signatures)
            model.pages = int(data["pages"])
            model._counts = {int(s, 16): int(n) for s, n in dict(data["counts"]).items()}
            model._keys = {int(k, 16) for k in data.get("keys", ())}
            model._settled = {int(k, 16) for k in data.get("settled", ())}
            model.frozen = bool(data.get("frozen", False))
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"bad template table: {exc}") from None
        return model


def template_blocks(blocks: list[Block], signed: Signed,
                    model: TemplateTable) -> list[TemplateBlock]:
    """The template blocks of a page's main content, in document order.

    The leading and trailing runs of template blocks (a site header, a banner, a footer,
    a previous/next bar; headings included), and between them the prose blocks whose
    text the site repeats on most pages; a repeated heading or code block between two
    blocks of the page's own is content. Never every block: a page the template wholly
    covers keeps its content.
    """
    if not model.warm or not blocks:
        return []
    verdicts: dict[int, int] = {}  # block ordinal -> template signature
    for ordinal, signatures in signed.items():
        for signature in signatures:
            if model.is_template(signature):
                verdicts[ordinal] = signature
                break
        else:
            if ordinal in signed.by_item and (found := _template_items(signed.by_item[ordinal],
                                                                       model)):
                verdicts[ordinal] = found
    if not verdicts:
        return []
    lead = 0
    while lead < len(blocks) and blocks[lead].ordinal in verdicts:
        lead += 1
    if lead == len(blocks):
        return []
    trail = len(blocks)
    while trail > lead and blocks[trail - 1].ordinal in verdicts:
        trail -= 1
    return [
        TemplateBlock(block, verdicts[block.ordinal], model.count(verdicts[block.ordinal]),
                      at_end=i >= trail)
        for i, block in enumerate(blocks)
        if block.ordinal in verdicts and (i < lead or i >= trail or _inner_candidate(block))
    ]


def _template_items(items: tuple[tuple[int, ...], ...], model: TemplateTable) -> int | None:
    """A template signature of a list most of whose items are template, else None."""
    found = [next((s for s in item if model.is_template(s)), None) for item in items]
    hits = [s for s in found if s is not None]
    if len(hits) >= 2 and len(hits) >= ITEM_SHARE * len(items):
        return max(hits, key=model.count)
    return None
