"""`main_heading`: the page's own top heading, read from the page.

Title and main heading are stored separately and neither is authoritative (seed 000): the
`<title>` never picks among the page's headings. A page titled "Installation - Lockstep"
whose `h1` says "Installing" keeps "Installing", not a later "Installation methods" `h2`;
a Javadoc class page titled "Kettle (Brewhouse API)" keeps its `h1` "Class Kettle", not
the constructor's `h3` "Kettle". When the two disagree, `page.identity_warning` says so.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from typing import TypeVar

from lxml import etree

from docscrawl.extract.clean import iter_content, visible_text
from docscrawl.extract.main_content import names_title, title_parts
from docscrawl.extract.model import Block

__all__ = ["TITLE_BLOCK_WITHIN", "banner_headings", "page_heading", "top_heading"]

TITLE_BLOCK_WITHIN = 5  # a title shown by no heading element is among the first blocks
# Elements that scope a `<header>` to their own section: a header outside all of them is
# the page's banner (HTML-AAM maps it to role=banner), the site's header.
SECTIONING = frozenset({"article", "aside", "main", "nav", "section"})
BANNER_LINK_SHARE = 0.5  # a banner mostly of link text is site navigation


def page_heading(blocks: list[Block], title: str | None, *,
                 skip: Collection[int] = ()) -> str | None:
    """The heading naming the page: its first heading of the highest rank present.

    Before any heading, one of the first blocks may show the page's title without being a
    heading element (Haddock's caption, Doxygen's title div): it is recognised by its
    whole text being the `<title>` or a part of it, and names the page. `skip` holds the
    `id()` of heading blocks that are site chrome (`banner_headings`); they are passed
    over unless the page has no other heading. None when no block is a heading.
    """
    parts = title_parts(title)
    for block in blocks[:TITLE_BLOCK_WITHIN]:
        if block.kind == "heading":
            break
        text = " ".join(block.markdown.split())
        if block.kind == "paragraph" and parts and names_title(text, parts):
            return text
    headings = [b for b in blocks if b.kind == "heading"]
    return top_heading(
        [b for b in headings if id(b) not in skip] or headings, _block_level, _block_text)


H = TypeVar("H")


def top_heading(headings: Iterable[H], level: Callable[[H], int],
                text: Callable[[H], str]) -> str | None:
    """Text of the first of `headings` with the lowest level (`level(h)`, `text(h)`).

    Shared by extraction (heading blocks) and `docscrawl check` (a record's `headings`),
    so that both read "the page's own top heading" the same way.
    """
    best: tuple[int, str] | None = None
    for heading in headings:
        rank, words = level(heading), text(heading)
        if words and (best is None or rank < best[0]):
            best = (rank, words)
    return best[1] if best else None


def _block_level(block: Block) -> int:
    return len(block.markdown) - len(block.markdown.lstrip("#"))


def _block_text(block: Block) -> str:
    return block.heading_path[-1] if block.heading_path else block.markdown.lstrip("# ")


def banner_headings(blocks: list[Block], elements: dict[int, etree._Element]) -> set[int]:
    """`id()` of the heading blocks inside the page's banner: a `<header>` outside every
    sectioning element (or `role=banner`) whose text is mostly links. Node.js puts its
    site title `h1` ("Node.js v18.20.4 documentation") and its version and TOC pickers
    there, above each module's own `h2`; gi-docgen's `<header>` inside its `<section>`
    holds the page's own `h1` and is no banner."""
    found: set[int] = set()
    verdicts: dict[etree._Element, bool] = {}
    for block in blocks:
        el = elements.get(block.ordinal) if block.kind == "heading" else None
        banner = _banner_of(el) if el is not None else None
        if banner is None:
            continue
        if banner not in verdicts:
            verdicts[banner] = _mostly_links(banner)
        if verdicts[banner]:
            found.add(id(block))
    return found


def _banner_of(el: etree._Element) -> etree._Element | None:
    header: etree._Element | None = None
    for ancestor in el.iterancestors():
        tag = ancestor.tag if isinstance(ancestor.tag, str) else ""
        if (ancestor.get("role") or "").lower() == "banner":
            return ancestor
        if tag == "header" and header is None:
            header = ancestor
        elif tag in SECTIONING:
            return None
    return header


def _mostly_links(el: etree._Element) -> bool:
    total = len(visible_text(el))
    links = sum(len(visible_text(a)) for a in iter_content(el) if a.tag == "a")
    return total > 0 and links >= BANNER_LINK_SHARE * total
