"""`<meta http-equiv="refresh" content="0; url=...">`: a redirect written in HTML."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urljoin

MAX_REFRESH_DELAY = 5.0  # seconds; slower refreshes are page behaviour, not redirects
_CONTENT = re.compile(r"^\s*(\d+(?:\.\d*)?)\s*[;,]?\s*(?:url\s*=\s*)?(.*)$", re.I | re.S)


def meta_refresh_target(root: Any, base_url: str) -> str | None:
    """Absolute target of an immediate meta refresh in the page's head, or None."""
    head = root.find("head") if root is not None else None
    if head is None:
        return None
    for meta in head.iter("meta"):
        if (meta.get("http-equiv") or "").strip().lower() != "refresh":
            continue
        match = _CONTENT.match(meta.get("content") or "")
        if not match:
            continue
        delay, target = float(match.group(1)), match.group(2).strip().strip("'\"")
        if target and delay <= MAX_REFRESH_DELAY:
            return urljoin(base_url, target)
    return None
