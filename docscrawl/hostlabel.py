"""The folder a site's crawl writes to by default. Standard library only: the Scrapyd
helper (`deploy/scrapyd_ops.py`) imports it outside docscrawl's virtualenv."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

__all__ = ["default_host_label"]


_UNSAFE = re.compile(r"[^\w.:-]")  # besides letters, digits and _: . : (IPv6) and -


def default_host_label(site: str) -> str:
    """Folder name for a site: its host, plus `_port` when the URL names a port.

    Always one safe path component: a character that is not a letter, digit, `_`, `.`,
    `:` or `-` (a path separator, `%`) becomes `_`, and leading and trailing dots go, so
    that no host (`..`, `.`) names a folder outside the output root."""
    parts = urlsplit(site)
    host = _UNSAFE.sub("_", (parts.hostname or "").lower()).strip(".") or "site"
    return f"{host}_{parts.port}" if parts.port else host
