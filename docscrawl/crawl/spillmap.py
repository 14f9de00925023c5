"""Recent entries in a dict, the rest spilled to disk in batches.

A crawl of 50,000 pages cannot keep every seen URL (`docscrawl.discovery.seenurls`) nor every page
track (`docscrawl.discovery.trackstore`) in memory. Both keep the entries used last in one
`SpillMap`: an insertion-ordered dict used as an LRU list (least recently used first; a
use moves an entry to the end). Once it holds `keep` entries (plus the pinned ones) and a
batch more, the oldest unpinned ones go to `spill` together, one database write for many
entries. Reading them back is the owner's business: only it knows its table.

Without a `spill` function nothing leaves memory (unit tests, small tools); then the order
is the order of insertion and a use does not move an entry.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from itertools import islice
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class SpillMap(Generic[K, V]):
    """Key -> value for the entries in memory; `spill` receives the oldest in batches."""

    __slots__ = ("batch", "hot", "keep", "pinned", "spill", "spilled")

    def __init__(self, spill: Callable[[list[tuple[K, V]]], None] | None, *, keep: int,
                 batch: int) -> None:
        self.spill = spill
        self.keep = max(1, keep)
        self.batch = batch
        # The owners read and write `hot` directly on their hot paths (a lookup per link):
        # least recently used first when spilling.
        self.hot: dict[K, V] = {}
        self.pinned: set[K] = set()  # kept in memory whatever their age
        self.spilled = 0  # entries handed to `spill`, for the crawl's stats

    @property
    def spills(self) -> bool:
        """True when entries may leave memory (a `spill` function was given)."""
        return self.spill is not None

    def put(self, key: K, value: V) -> None:
        """Set `key` as the most recently used entry, then spill if past the limit."""
        hot = self.hot
        if self.spill is not None:
            hot.pop(key, None)
        hot[key] = value
        self.trim()

    def touch(self, key: K, value: V) -> None:
        """`key` (just read, from memory or disk) becomes the most recently used entry."""
        self.put(key, value)

    def trim(self) -> None:
        """Past `keep` (plus the pinned ones) by a batch, hand the least recently used
        unpinned entries to `spill` and drop them from memory."""
        hot = self.hot
        excess = len(hot) - len(self.pinned) - self.keep
        if self.spill is None or excess < min(self.batch, self.keep):
            return
        pinned = self.pinned
        if pinned:
            oldest = list(islice(((k, v) for k, v in hot.items() if k not in pinned), excess))
        else:
            oldest = list(islice(hot.items(), excess))
        self.spill(oldest)
        for key, _ in oldest:
            del hot[key]
        self.spilled += len(oldest)
