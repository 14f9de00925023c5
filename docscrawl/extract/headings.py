"""Headings of the main content: level, text, anchor, and the heading-path stack.

Levels are taken as observed, never invented: a jump (h2 -> h4) keeps the path as it is
(the h4 sits directly under the h2) and is reported as a `heading_level_gap` warning.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from lxml import etree

from docscrawl.extract.clean import ZERO_WIDTH, is_chrome, visible_text
from docscrawl.extract.model import ExtractionWarning, Heading

HEADING_TAGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
# Trailing permalink markers some generators leave in the heading text.
MARKER_CHARS = "¶§#🔗 " + ZERO_WIDTH
GAP_WARNING = "heading_level_gap"
_WORD = re.compile(r"[^0-9A-Za-z]+")


def heading_level(el: etree._Element) -> int | None:
    """Level 1-6 of a heading element (`h1`-`h6` or `role=heading` + `aria-level`)."""
    tag = el.tag
    level = HEADING_TAGS.get(tag)  # a comment's tag (a function) is no key either
    if level is not None:
        return level
    if not isinstance(tag, str):
        return None
    if len(tag) == 2 and (level := HEADING_TAGS.get(tag.lower())) is not None:
        return level  # `H2` from an XHTML or hand-built tree
    role = el.get("role")  # most elements have none: the usual answer, without lower()
    if role is not None and role.lower() == "heading":
        raw = (el.get("aria-level") or "").strip()
        if raw.isdigit() and 1 <= int(raw) <= 6:
            return int(raw)
    return None


def heading_text(el: etree._Element) -> str:
    """Visible heading text without permalink markers."""
    return visible_text(el).rstrip(MARKER_CHARS).strip()


def heading_anchor(
    el: etree._Element, root: etree._Element | None = None, page_url: str = ""
) -> str | None:
    """The fragment that targets this heading, or None.

    In order: the heading's own id; the id of the nearest element (up to `root`, the main
    content) that the heading starts (`section_anchor`); an empty named element just
    before the heading or its wrapper (`preceding_anchor`); a named anchor inside the
    heading; its permalink marker; the heading text linking to its own fragment.
    """
    own = (el.get("id") or "").strip()
    if own:
        return own
    found = section_anchor(el, root, page_url) or preceding_anchor(el, root)
    if found:
        return found
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


def section_anchor(
    el: etree._Element, root: etree._Element | None = None, page_url: str = ""
) -> str | None:
    """The id of the nearest enclosing element whose first heading is `el`.

    Generators put a section's id on its wrapper, at any depth above the heading: Sphinx
    `<section id>` directly, DocBook `<div class="sect1" id><div class="titlepage"><div><div>
    <h2>`. The walk stops at `root` (the main content) and as soon as a heading precedes
    `el` in the ancestor (the ancestor then starts an earlier section). The heading's
    parent names it whatever its id; a wrapper further up, or `root` itself, only when its
    id spells the section (`_names_page`): a template's `<div id="content">` (erl_docgen,
    around the `h1` of every page) or `id="header"` (AsciiDoc) repeats on every page.
    """
    cur = el
    parent = cur.getparent()
    while parent is not None and cur is not root:
        if not isinstance(parent.tag, str) or parent.tag in ("body", "html"):
            return None
        if _heading_before(cur):
            return None
        ident = (parent.get("id") or "").strip()
        if ident and ((cur is el and parent is not root) or _names_page(ident, el, page_url)):
            return ident
        cur, parent = parent, parent.getparent()
    return None


def preceding_anchor(el: etree._Element, root: etree._Element | None = None) -> str | None:
    """The name of an empty element just before `el` or a wrapper `el` starts.

    gtk-doc, Javadoc and texinfo mark a section with `<a name="g-strdup"></a>` (or an empty
    `<a id>`/`<span id>`) before the heading or before the `div` around it, nothing but
    whitespace between.
    """
    cur = el
    while cur is not None and isinstance(cur.tag, str):
        prev = cur.getprevious()
        while prev is not None and not isinstance(prev.tag, str):  # comments
            if (prev.tail or "").strip():
                return None
            prev = prev.getprevious()
        if prev is not None:
            if (prev.tail or "").strip():
                return None
            name = (prev.get("id") or prev.get("name") or "").strip()
            if name and _empty(prev):
                return name
            return None
        parent = cur.getparent()
        if cur is root or parent is None or (parent.text or "").strip():
            return None
        if not isinstance(parent.tag, str) or parent.tag in ("body", "html"):
            return None
        cur = parent
    return None


def _heading_before(el: etree._Element) -> bool:
    """True when a heading precedes `el` among its siblings (or inside them)."""
    for sib in el.itersiblings(preceding=True):
        if not isinstance(sib.tag, str):
            continue
        if heading_level(sib) is not None:
            return True
        if any(heading_level(d) is not None for d in sib.iterdescendants()):
            return True
    return False


def _empty(el: etree._Element) -> bool:
    """An anchor target with no content of its own."""
    return not "".join(el.itertext()).strip() and not any(
        isinstance(d.tag, str) and d.tag in ("img", "svg") for d in el.iterdescendants())


def _squash(text: str) -> str:
    return "".join(ch for ch in text.lower() if ch.isalnum())


def _names_page(ident: str, heading: etree._Element, page_url: str) -> bool:
    """True when a wrapper's id is the section's own: it spells the page's file name
    (PostgreSQL's `SQL-CREATETABLE` on sql-createtable.html) or the heading, whole or one
    word of four letters or more (`VACUUM-BASICS` for "25.1.1. Vacuuming Basics"),
    unlike a template's `content` or `main-content`."""
    key = _squash(ident)
    if not key:
        return False
    stem = _squash(page_url.split("#")[0].split("?")[0].rstrip("/").rsplit("/", 1)[-1]
                   .rsplit(".", 1)[0])
    if stem and (key == stem or key in stem):
        return True
    title = _squash(heading_text(heading))
    return key in title or any(
        len(word) >= 4 and _squash(word) in title for word in _WORD.split(ident))


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


def extract_headings(
    main: etree._Element, page_url: str = ""
) -> tuple[list[Heading], list[ExtractionWarning]]:
    """All headings of `main` in document order, skipping chrome, with gap warnings."""
    stack = HeadingStack()
    headings: list[Heading] = []
    warnings: list[ExtractionWarning] = []
    _walk(main, stack, headings, warnings, main, page_url)
    return headings, warnings


def _walk(
    el: etree._Element,
    stack: HeadingStack,
    headings: list[Heading],
    warnings: list[ExtractionWarning],
    root: etree._Element,
    page_url: str,
) -> None:
    for child in el:
        if is_chrome(child):
            continue
        level = heading_level(child)
        if level is None:
            _walk(child, stack, headings, warnings, root, page_url)
            continue
        text = heading_text(child)
        if not text:
            continue
        heading, warning = stack.push(level, text, heading_anchor(child, root, page_url))
        headings.append(heading)
        if warning:
            warnings.append(warning)
