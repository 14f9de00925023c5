"""Every URL a crawl has seen, and the key of the page track it belongs to.

The frontier asks this for each link it is offered, so a site of 50,000 pages would keep
50,000 URLs in memory. Only the URLs used last stay in memory (`keep` of them: a page's
sidebar links come up on every page of its section); the others are in the crawl ledger
(`docscrawl.crawl.ledger.SeenTable`, by `docscrawl.crawl.spillmap.SpillMap`) and are read back
when offered again. Without a table
everything stays in memory.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from docscrawl.crawl.spillmap import SpillMap

DEFAULT_KEEP = 16_384  # URLs kept in memory
SPILL_BATCH = 1024  # URLs written to disk together once `keep` is passed by this many
ABSENT = "\x00absent"  # `lookup` of a URL never seen


class SeenRows(Protocol):
    """Where URLs not used lately live (`docscrawl.crawl.ledger.SeenTable`)."""

    def lookup(self, url: str) -> tuple[bool, str | None]: ...
    def put_many(self, rows: list[tuple[str, str | None]]) -> None: ...


class SeenUrls:
    """URL -> the key of its page track, or None (seen, with no track)."""

    def __init__(self, rows: SeenRows | None = None, *, keep: int = DEFAULT_KEEP) -> None:
        self._rows = rows
        self._map: SpillMap[str, str | None] = SpillMap(
            rows.put_many if rows is not None else None, keep=keep, batch=SPILL_BATCH)
        self._hot = self._map.hot  # least recently used first (with rows)

    @property
    def keep(self) -> int:
        """URLs kept in memory."""
        return self._map.keep

    @property
    def spilled(self) -> int:
        """URLs written to disk, for the crawl's stats."""
        return self._map.spilled

    def lookup(self, url: str) -> str | None:
        """The key recorded for `url`: None when it has no track, `ABSENT` when unseen."""
        hot = self._hot
        if self._rows is None:
            return hot.get(url, ABSENT)
        if url in hot:
            key = hot.pop(url)
        else:
            found, key = self._rows.lookup(url)
            if not found:
                return ABSENT
        hot[url] = key  # most recently used last
        self._map.trim()
        return key

    def __contains__(self, url: str) -> bool:
        return self.lookup(url) is not ABSENT

    def get(self, url: str) -> str | None:
        """The key of the track `url` belongs to, None when unseen or without one."""
        key = self.lookup(url)
        return None if key is ABSENT else key

    def __setitem__(self, url: str, key: str | None) -> None:
        self._map.put(url, key)

    def add_all(self, urls: Iterable[str]) -> None:
        """Mark URLs seen (without a track) unless already seen."""
        for url in urls:
            if url not in self:
                self[url] = None
