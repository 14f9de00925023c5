"""Separators the browser draws from the stylesheet between inline elements whose text
lacks them: written out in the Markdown so that words do not run together.

A documentation stylesheet often separates two pieces of text with `:before` content or a
margin instead of a character in the HTML: a docutils classifier (`x` `array_like` shown
as "x : array_like"), Node.js's version spans, Doxygen's member labels. The renderer
(`markdown.py`) asks `css_separators` for each inline element and `glued_in_row` for each
span. Pure functions of the tree; the stylesheet itself is never read.
"""

from __future__ import annotations

import re

from lxml import etree

from docscrawl.extract.clean import class_tokens

# Separators a stylesheet draws around an inline element whose text lacks them, written
# out (before, after). docutils and Sphinx: `.classifier:before {content: ":"; margin: 0
# 0.5em}` between a term and its type (numpydoc parameters `x : array_like`).
CSS_SEPARATORS: dict[str, tuple[str, str]] = {"classifier": (" : ", "")}
# Spans laid out side by side in a block, their gap drawn by CSS margins: Node.js's
# `div.api_metadata > span` ("Added in: v8.1.0" "Deprecated since: v10.0.0"), Doxygen's
# `td > span.mlabels > span.mlabel` ("inline" "static"). A span glued to a sibling span,
# in a block (or a span that is all of a block) holding nothing else, gets a space.
BLOCK_LEVEL_TAGS = frozenset({
    "div", "p", "td", "th", "li", "dd", "dt", "section", "article", "header", "aside",
    "blockquote", "figcaption", "caption", "summary", "details", "main", "body",
})
_WORD_END = re.compile(r"[\w)\]]$")
_WORD_START = re.compile(r"^[\w(\[]")


def css_separators(el: etree._Element) -> tuple[str, str] | None:
    """(before, after) the stylesheet draws around `el` (CSS_SEPARATORS), else None."""
    for token in class_tokens(el):
        if token in CSS_SEPARATORS:
            return CSS_SEPARATORS[token]
    return None


def glued_in_row(span: etree._Element) -> bool:
    """True when `span` directly follows a sibling span with nothing between, in a row
    of spans a stylesheet lays apart (see BLOCK_LEVEL_TAGS), and the two texts would
    run into one word."""
    prev = span.getprevious()
    if prev is None or prev.tag != "span" or prev.tail:
        return False
    parent = span.getparent()
    if parent is None or not _holds_only_spans(parent):
        return False
    if parent.tag not in BLOCK_LEVEL_TAGS:
        block = parent.getparent()  # a span of spans that is all of its block
        if (parent.tag != "span" or block is None or block.tag not in BLOCK_LEVEL_TAGS
                or not _holds_only(block, parent)):
            return False
    left = "".join(prev.itertext())
    right = "".join(span.itertext())
    return bool(_WORD_END.search(left) and _WORD_START.match(right))


def _holds_only_spans(el: etree._Element) -> bool:
    if (el.text or "").strip():
        return False
    return all(
        (child.tag == "span" or not isinstance(child.tag, str)) and not (child.tail or "").strip()
        for child in el
    )


def _holds_only(block: etree._Element, only: etree._Element) -> bool:
    if (block.text or "").strip():
        return False
    return all(
        (child is only or not isinstance(child.tag, str)) and not (child.tail or "").strip()
        for child in block
    )
