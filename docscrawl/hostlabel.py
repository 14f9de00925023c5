"""The folder a site's crawl writes to by default. Standard library only: the Scrapyd
helper (`deploy/scrapyd_ops.py`) imports it outside docscrawl's virtualenv."""

from __future__ import annotations

from urllib.parse import urlsplit

__all__ = ["default_host_label"]


def default_host_label(site: str) -> str:
    """Folder name for a site: its host, plus `_port` when the URL names a port."""
    parts = urlsplit(site)
    host = (parts.hostname or "site").lower()
    return f"{host}_{parts.port}" if parts.port else host
