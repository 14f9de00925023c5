"""A page's Markdown in parts an assistant can take: a character window, or one section.

A documentation page can be millions of characters (Node's single-page `all.html`:
3.57 million), more than any assistant's context; `get_page` returns at most `limit`
characters from `offset` (both counted in the page's Markdown), cut at a line end when
one is near, and says where the next part starts. A section is a heading's line up to
the next heading of the same or a higher level, found by the heading's anchor or text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from docscrawl.search.index import IndexError_

PAGE_CHARS = 20_000        # a part's length when the caller names none
MAX_PAGE_CHARS = 100_000   # the most one call returns
MIN_PAGE_CHARS = 500
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r"^(#{1,6}) (.*)$")
_QUOTED = re.compile(r"^(?:> ?)+")


@dataclass(frozen=True)
class Section:
    """One heading's span in the page Markdown: [start, end) in characters."""
    level: int
    text: str
    anchor: str | None
    start: int
    end: int


@dataclass(frozen=True)
class Part:
    """The characters [start, end) of a page of `total`, within `section` if one."""
    start: int
    end: int
    total: int
    section: Section | None = None

    @property
    def stop(self) -> int:
        """Where the part's scope (the section, else the page) ends."""
        return self.section.end if self.section else self.total

    @property
    def left(self) -> int:
        return self.stop - self.end


def heading_lines(markdown: str) -> list[tuple[int, int, str]]:
    """(offset, level, text) of each ATX heading line outside code fences, also inside
    a blockquote or callout (`> #### name`: MkDocs' admonitions)."""
    found = []
    fence: str | None = None
    offset = 0
    for line in markdown.splitlines(keepends=True):
        body = _QUOTED.sub("", line.rstrip("\r\n"))
        opened = _FENCE.match(body)
        if fence is not None:
            if opened and opened.group(1).startswith(fence) and not body[opened.end():].strip():
                fence = None
        elif opened:
            fence = opened.group(1)
        elif match := _HEADING.match(body):
            found.append((offset, len(match.group(1)), match.group(2)))
        offset += len(line)
    return found


def sections(markdown: str, headings: list[dict[str, Any]]) -> list[Section]:
    """The page's sections: each of the record's `headings` (in order, each rendered as
    a `#` line of its level and text) matched to its line in the Markdown."""
    lines = heading_lines(markdown)
    spans: list[tuple[int, int, str, str | None]] = []
    at = 0
    for heading in headings:
        level, text = heading.get("level"), heading.get("text")
        for i in range(at, len(lines)):
            if lines[i][1] == level and lines[i][2] == text:
                spans.append((lines[i][0], int(level), str(text), heading.get("anchor")))
                at = i + 1
                break
    found = []
    for i, (start, level, text, anchor) in enumerate(spans):
        end = next((s for s, lvl, *_ in spans[i + 1:] if lvl <= level), len(markdown))
        found.append(Section(level, text, anchor, start, end))
    return found


def find_section(found: list[Section], wanted: str) -> Section | None:
    """The section whose anchor is `wanted` (a leading `#`, or a whole URL's fragment,
    allowed), else the first whose heading text is `wanted` ignoring case and spaces."""
    anchor = wanted.rsplit("#", 1)[-1].strip()
    for section in found:
        if section.anchor and section.anchor == anchor:
            return section
    text = " ".join(wanted.split()).casefold()
    return next((s for s in found if " ".join(s.text.split()).casefold() == text), None)


def page_part(markdown: str, *, offset: int = 0, limit: int = PAGE_CHARS,
              section: Section | None = None) -> Part:
    """The part of `markdown` from `offset` (or the section's start, if later) of at most
    `limit` characters, ending at a line end in its second half when it is cut."""
    total = len(markdown)
    limit = max(MIN_PAGE_CHARS, min(limit, MAX_PAGE_CHARS))
    first, stop = (section.start, section.end) if section else (0, total)
    start = max(offset, first)
    if offset < 0 or (start >= stop and stop > first):
        scope = "section" if section else "page"
        raise IndexError_(f"offset {offset} is outside the {scope} (characters "
                          f"{first}-{stop}); the page has {total} characters")
    end = min(start + limit, stop)
    if end < stop:
        line_end = markdown.rfind("\n", start + limit // 2, end)
        if line_end >= 0:
            end = line_end + 1
    return Part(start, end, total, section)
