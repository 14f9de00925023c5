"""Headings of the main content: level, text, anchor, and the heading-path stack.

Levels are taken as observed, never invented: a jump (h2 -> h4) keeps the path as it is
(the h4 sits directly under the h2) and is reported as a `heading_level_gap` warning.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lxml import etree

from docscrawl.extract.clean import ZERO_WIDTH, is_chrome, visible_text
from docscrawl.extract.model import ExtractionWarning, Heading

HEADING_TAGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
# Elements whose id names the heading they start (Sphinx puts ids on `section`).
ANCHOR_CONTAINERS = frozenset({"section", "div", "article"})
# Trailing permalink markers some generators leave in the heading text.
MARKER_CHARS = "¶§#🔗 " + ZERO_WIDTH
GAP_WARNING = "heading_level_gap"


def heading_level(el: etree._Element) -> int | None:
    """Level 1-6 of a heading element (`h1`-`h6` or `role=heading` + `aria-level`)."""
    tag = el.tag
    if not isinstance(tag, str):
        return None
    level = HEADING_TAGS.get(tag)
    if level is None and len(tag) == 2:  # `H2` from an XHTML or hand-built tree
        level = HEADING_TAGS.get(tag.lower())
    if level is not None:
        return level
    if (el.get("role") or "").lower() == "heading":
        raw = (el.get("aria-level") or "").strip()
        if raw.isdigit() and 1 <= int(raw) <= 6:
            return int(raw)
    return None


def heading_text(el: etree._Element) -> str:
    """Visible heading text without permalink markers."""
    return visible_text(el).rstrip(MARKER_CHARS).strip()


def heading_anchor(el: etree._Element) -> str | None:
    """The fragment that targets this heading, or None."""
    own = (el.get("id") or "").strip()
    if own:
        return own
    parent = el.getparent()
    if (
        parent is not None
        and isinstance(parent.tag, str)
        and parent.tag in ANCHOR_CONTAINERS
        and (parent.get("id") or "").strip()
        and _first_heading_child(parent) is el
    ):
        return parent.get("id").strip()
    for a in el.iter("a"):
        name = (a.get("id") or a.get("name") or "").strip()
        if name:
            return name
    for a in el.iter("a"):
        href = (a.get("href") or "").strip()
        if href.startswith("#") and len(href) > 1 and is_chrome(a):
            return href[1:]  # the permalink marker points at the heading
    for a in el.iter("a"):  # the heading text is itself a link to the heading's fragment
        href = (a.get("href") or "").strip()  # (a docutils toc-backref points at the TOC)
        if (href.startswith("#") and len(href) > 1 and "toc-backref" not in (a.get("class") or "")
                and visible_text(a) == visible_text(el)):
            return href[1:]
    return None


def _first_heading_child(parent: etree._Element) -> etree._Element | None:
    for child in parent:
        if heading_level(child) is not None:
            return child
    return None


@dataclass
class HeadingStack:
    """The open headings above the current position in the document."""

    _open: list[Heading] = field(default_factory=list)

    @property
    def path(self) -> list[str]:
        """Texts of the open headings, outermost first."""
        return [h.text for h in self._open]

    @property
    def anchor(self) -> str | None:
        """Anchor of the innermost open heading that has one."""
        for heading in reversed(self._open):
            if heading.anchor:
                return heading.anchor
        return None

    def push(
        self, level: int, text: str, anchor: str | None
    ) -> tuple[Heading, ExtractionWarning | None]:
        """Open a heading: it replaces its level and closes every deeper one."""
        warning = None
        if self._open and level > self._open[-1].level + 1:
            last = self._open[-1]
            warning = ExtractionWarning(
                GAP_WARNING, f'h{last.level} "{last.text}" -> h{level} "{text}"'
            )
        while self._open and self._open[-1].level >= level:
            self._open.pop()
        heading = Heading(level=level, text=text, anchor=anchor, path=[*self.path, text])
        self._open.append(heading)
        return heading, warning


def extract_headings(main: etree._Element) -> tuple[list[Heading], list[ExtractionWarning]]:
    """All headings of `main` in document order, skipping chrome, with gap warnings."""
    stack = HeadingStack()
    headings: list[Heading] = []
    warnings: list[ExtractionWarning] = []
    _walk(main, stack, headings, warnings)
    return headings, warnings


def _walk(
    el: etree._Element,
    stack: HeadingStack,
    headings: list[Heading],
    warnings: list[ExtractionWarning],
) -> None:
    for child in el:
        if is_chrome(child):
            continue
        level = heading_level(child)
        if level is None:
            _walk(child, stack, headings, warnings)
            continue
        text = heading_text(child)
        if not text:
            continue
        heading, warning = stack.push(level, text, heading_anchor(child))
        headings.append(heading)
        if warning:
            warnings.append(warning)
