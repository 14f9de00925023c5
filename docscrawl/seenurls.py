"""Every URL a crawl has seen, and the key of the page track it belongs to.

The frontier asks this for each link it is offered, so a site of 50,000 pages would keep
50,000 URLs in memory. Only the URLs used last stay in memory (`keep` of them: a page's
sidebar links come up on every page of its section); the others are in the crawl ledger
(`docscrawl.ledger.SeenTable`) and are read back when offered again. Without a table
everything stays in memory.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import islice
from typing import Protocol

DEFAULT_KEEP = 16_384  # URLs kept in memory
SPILL_BATCH = 1024  # URLs written to disk together once `keep` is passed by this many
ABSENT = "\x00absent"  # `lookup` of a URL never seen


class SeenRows(Protocol):
    """Where URLs not used lately live (`docscrawl.ledger.SeenTable`)."""

    def lookup(self, url: str) -> tuple[bool, str | None]: ...
    def put_many(self, rows: list[tuple[str, str | None]]) -> None: ...


class SeenUrls:
    """URL -> the key of its page track, or None (seen, with no track)."""

    def __init__(self, rows: SeenRows | None = None, *, keep: int = DEFAULT_KEEP) -> None:
        self._rows = rows
        self.keep = max(1, keep)
        self._hot: dict[str, str | None] = {}  # least recently used first (with rows)
        self.spilled = 0  # URLs written to disk, for the crawl's stats

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
        self._spill()
        return key

    def __contains__(self, url: str) -> bool:
        return self.lookup(url) is not ABSENT

    def get(self, url: str) -> str | None:
        """The key of the track `url` belongs to, None when unseen or without one."""
        key = self.lookup(url)
        return None if key is ABSENT else key

    def __setitem__(self, url: str, key: str | None) -> None:
        hot = self._hot
        if self._rows is not None:
            hot.pop(url, None)
        hot[url] = key
        self._spill()

    def add_all(self, urls: Iterable[str]) -> None:
        """Mark URLs seen (without a track) unless already seen."""
        for url in urls:
            if url not in self:
                self[url] = None

    def _spill(self) -> None:
        """Past `keep` by a batch, write the least recently used URLs to disk."""
        excess = len(self._hot) - self.keep
        if self._rows is None or excess < min(SPILL_BATCH, self.keep):
            return
        oldest = list(islice(self._hot.items(), excess))
        self._rows.put_many(oldest)
        for url, _ in oldest:
            del self._hot[url]
        self.spilled += len(oldest)
