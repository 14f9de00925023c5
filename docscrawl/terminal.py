"""Crawled text on a terminal. Titles, snippets, URLs and log lines come from the sites
crawled, and a site can put control characters in them: an ESC sequence that recolours,
moves the cursor, retitles the window or writes a hyperlink; a carriage return that hides
what came before it on the line; a bidi override that shows text in another order than it
is. Every command that prints crawled text passes what it prints through `for_terminal`
(human output) or `json_text` (`--json`), so the characters are shown, never obeyed.
"""

from __future__ import annotations

import json
import re
from typing import Any

# C0 controls but tab and newline, DEL, C1 controls (0x9b is a one-byte CSI), and the bidi
# embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069).
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def for_terminal(text: str) -> str:
    """`text` with each unsafe character written as a visible escape (`\\x1b`,
    `\\u202e`); tabs and newlines kept."""
    return _UNSAFE.sub(_escape, text)


def json_text(data: Any, *, indent: int | None = None) -> str:
    """`data` as JSON, UTF-8 text kept readable, every unsafe character a JSON escape
    (`json.dumps` escapes C0 but leaves C1 and bidi controls as they are). The value read
    back is unchanged: only string contents hold such characters, and `\\u009b` is the
    same string in JSON."""
    text = json.dumps(data, ensure_ascii=False, indent=indent, default=str)
    return _UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
