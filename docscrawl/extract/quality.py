"""Page-level quality gates applied after extraction (pure functions)."""

from __future__ import annotations

import re

# Titles and first headings that servers use for "not found" pages answered with 200.
_NOT_FOUND = re.compile(
    r"^\s*(?:error\s*)?(?:404\b|page not found|not found|file not found|"
    r"(?:this|the) page (?:does not|doesn't|could not|cannot) (?:exist|be found))",
    re.I,
)
SOFT_404_MAX_CHARS = 2000  # a real page about HTTP 404 errors is longer than an error page


def soft_404_reason(title: str | None, main_heading: str | None, markdown: str) -> str | None:
    """Why a 200 page is really a "not found" page, or None.

    Both conditions: the title or main heading starts like an error page ("404", "Page not
    found"...), and the main content is short (under SOFT_404_MAX_CHARS characters).
    """
    if len(markdown) >= SOFT_404_MAX_CHARS:
        return None
    for source, text in (("title", title), ("main heading", main_heading)):
        if text and _NOT_FOUND.match(text):
            return f"{source} {text.strip()[:80]!r} on a {len(markdown)}-character page"
    return None


_CONTROL = bytes(range(0, 9)) + bytes(range(14, 32))
BINARY_SHARE = 0.10


def binary_reason(body: bytes, *, sample: int = 4096) -> str | None:
    """Why a body declared as HTML is really binary data, or None.

    More than BINARY_SHARE of the first `sample` bytes are control characters (NUL and the
    other C0 controls except tab, newline, vertical tab, form feed and carriage return).
    """
    head = body[:sample]
    if not head:
        return None
    controls = len(head) - len(head.translate(None, _CONTROL))  # one pass, not 27 counts
    share = controls / len(head)
    if share > BINARY_SHARE:
        return f"binary content served as HTML ({share:.0%} control bytes)"
    return None
