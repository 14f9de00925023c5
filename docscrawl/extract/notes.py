"""Notes the main content links to but does not hold: footnotes after the main element.

Texinfo writes a node's footnotes in `div.footnote` after the node's own element, so the
element chosen as main content ends before them; the note text is lost although the
content links to it (`<a href="#FOOT2">(2)</a>`). The page itself says the block belongs to
the content: a `#fragment` link in the main element lands in it. Such a block (the
outermost element around the target that does not hold the main element) is rendered after
the main content when it comes after it, is small next to it, is mostly not links and is
not navigation.
"""

from __future__ import annotations

from lxml import etree

from docscrawl.extract.clean import iter_content, visible_text
from docscrawl.extract.docindex import DocIndex
from docscrawl.extract.tree import document_position

__all__ = ["linked_notes"]

MAX_NOTE_SHARE = 0.5      # a note block holds at most half as much text as the main content
MAX_NOTE_LINK_SHARE = 0.5  # and at most this share of its text in links
MAX_FRAGMENT_LINKS = 200  # fragment links of the main element looked at
NAVIGATION_TAGS = frozenset({"nav", "header", "footer", "aside", "form"})

_NAMED = etree.XPath("//*[@id] | //a[@name]")


def linked_notes(root: etree._Element, main: etree._Element,
                 inside: frozenset[str], *, index: DocIndex | None = None,
                 ) -> list[etree._Element]:
    """Blocks after `main` that its own `#fragment` links land in, in document order
    (`inside`: the ids and `<a name>` anchors within `main`). The page's `index` (its ids
    and `anchor_names`) lets a page whose fragment links name no id and no anchor anywhere
    (a table of contents of dead links) skip the search for named elements."""
    fragments: list[str] = []
    for a in main.iter("a"):
        href = a.get("href") or ""
        if href.startswith("#") and len(href) > 1:
            fragments.append(href[1:])
            if len(fragments) >= MAX_FRAGMENT_LINKS:
                break
    if not fragments:
        return []
    outside = [name for name in dict.fromkeys(fragments) if name not in inside]
    if not outside or (index is not None and _named_nowhere(outside, index)):
        return []
    named: dict[str, etree._Element] = {}  # one pass over the page's named elements
    for el in _NAMED(root):
        named.setdefault(el.get("id") or el.get("name") or "", el)
    holding_main = {main, *main.iterancestors()}
    found: dict[etree._Element, None] = {}
    main_text = 0
    for name in outside:
        target = named.get(name)
        block = _outermost_without(target, holding_main) if target is not None else None
        if block is None or block in found:
            continue
        main_text = main_text or len(visible_text(main))
        if _is_note(block, main, main_text):
            found[block] = None
    return sorted(found, key=document_position)


def _named_nowhere(names: list[str], index: DocIndex) -> bool:
    """True when none of `names` is an element's id or an `<a name>` anywhere: the search
    for named elements would find none of them. (An element whose id is empty is looked up
    by its `name`, whatever its tag: then this cannot tell.)"""
    ids = index.ids
    if "" in ids or any(name in ids for name in names):
        return False
    anchors = index.anchor_names()
    return not any(name in anchors for name in names)


def _outermost_without(target: etree._Element,
                       holding_main: set[etree._Element]) -> etree._Element | None:
    """The outermost ancestor-or-self of `target` that is not the main element or one of
    its ancestors (`holding_main`)."""
    block = None
    node: etree._Element | None = target
    while node is not None and node not in holding_main:
        block, node = node, node.getparent()
    return block


def _is_note(block: etree._Element, main: etree._Element, main_text: int) -> bool:
    if document_position(block) < document_position(main):
        return False  # a page header, a "back to top" target
    if block.tag in NAVIGATION_TAGS or (block.get("role") or "").lower() == "navigation":
        return False
    if any(el.tag in NAVIGATION_TAGS for el in block.iter()):
        return False
    text = len(visible_text(block))
    if not text or text > MAX_NOTE_SHARE * main_text:
        return False
    links = sum(len(visible_text(a)) for a in iter_content(block) if a.tag == "a")
    return links <= MAX_NOTE_LINK_SHARE * text
