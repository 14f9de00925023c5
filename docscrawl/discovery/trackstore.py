"""The crawl's page tracks by normalized URL: the ones in use in memory, the others on disk.

A crawl keeps one `PageTrack` per page until it ends: the ways a page was found and the URLs
that serve it go into its record, and may grow after it is written. At 50,000 pages these
would be most of the crawl's memory, and a sitemap admits them all at once. So the store
keeps in memory only the tracks used last (`keep` of them) and those pinned while their page
is fetched, extracted and written: the pipeline holds those objects, and a copy must not be
changed behind its back. The others go to the crawl ledger (`docscrawl.crawl.ledger.TrackTable`,
by `docscrawl.crawl.spillmap.SpillMap`), and come back as new objects when asked for.

Without a table every track stays in memory (the frontier's unit tests, small tools).
"""

from __future__ import annotations

import marshal
from collections.abc import Iterator
from typing import Protocol

from docscrawl.crawl.spillmap import SpillMap
from docscrawl.discovery.pagetrack import Discovery, PageTrack, shared_pair

DEFAULT_KEEP = 2048  # tracks kept in memory past the pinned ones
SPILL_BATCH = 256  # tracks written to disk together once `keep` is passed by this many
LATE_BATCH = 4096  # ways found for tracks on disk, written to disk together


class TrackRows(Protocol):
    """Where spilled tracks live (`docscrawl.crawl.ledger.TrackTable`)."""

    def get(self, key: str) -> bytes | None: ...
    def put_many(self, rows: list[tuple[str, bytes]]) -> None: ...
    def __iter__(self) -> Iterator[tuple[str, bytes]]: ...
    def add_late(self, rows: list[tuple[str, int, list[Discovery]]]) -> None: ...
    def late_for(self, key: str) -> Iterator[Discovery]: ...
    def drop_late(self, key: str) -> None: ...
    def late_keys(self, limit: int) -> list[str]: ...


def freeze(track: PageTrack) -> bytes:
    """A track's state as bytes (marshal: its fields are strings, ints, None and tuples)."""
    return marshal.dumps(track.__getstate__())


def thaw(state: bytes) -> PageTrack:
    """A track from `freeze`'s bytes."""
    track = PageTrack.__new__(PageTrack)
    track.__setstate__(marshal.loads(state))
    return track


class TrackStore:
    """Normalized URL -> its claimed track; recently used and pinned tracks in memory."""

    def __init__(self, rows: TrackRows | None = None, *, keep: int = DEFAULT_KEEP) -> None:
        self._rows = rows
        self._map: SpillMap[str, PageTrack] = SpillMap(
            self._write_pairs if rows is not None else None, keep=keep, batch=SPILL_BATCH)
        self._live = self._map.hot  # least recently used first (with rows)
        self._pinned = self._map.pinned
        # Ways found for tracks on disk, not yet added to them: here, then in the table's
        # `late` rows; they are added, in order, when the track is read back.
        self._late: dict[str, list[Discovery]] = {}
        self._late_count = 0
        self._late_seq = 0
        self.deferred = 0  # ways found recorded without reading their track from disk

    @property
    def keep(self) -> int:
        """Tracks kept in memory past the pinned ones."""
        return self._map.keep

    @property
    def spilled(self) -> int:
        """Tracks written to disk, for the crawl's stats."""
        return self._map.spilled

    def get(self, key: str) -> PageTrack | None:
        """The track claimed for `key`: the same object as long as it stays in memory."""
        if self._rows is None:
            return self._live.get(key)
        track = self._live.pop(key, None)
        if track is None:
            state = self._rows.get(key)
            if state is None:
                return None
            track = self._caught_up(thaw(state))
        self._map.touch(key, track)
        return track

    def add_discovery(self, key: str, reason: str, source: str | None) -> PageTrack | None:
        """Add a way the page of `key` (which has a track) was found. A track in memory is
        changed and returned; one on disk is not read for it (a link to a page is found on
        many pages): the addition waits, and is made when the track is next read."""
        track = self._live.get(key)
        if track is not None or self._rows is None:
            if track is not None:
                track.add_discovery(reason, source)
                if self._rows is not None:  # used: it stays in memory longer
                    self._live[key] = self._live.pop(key)
            return track
        self._late.setdefault(key, []).append(shared_pair(reason, source))
        self._late_count += 1
        self.deferred += 1
        if self._late_count >= LATE_BATCH:
            self._write_late()
        return None

    def put(self, track: PageTrack) -> None:
        """Store the track of a newly claimed key (replacing the key's previous track)."""
        self._map.put(track.key, track)

    def pin(self, track: PageTrack) -> None:
        """Keep this track in memory until `release`: its page is being worked on."""
        if self._live.get(track.key) is track:
            self._pinned.add(track.key)

    def release(self, key: str) -> None:
        """The page of `key` has ended: its track may go to disk."""
        self._pinned.discard(key)

    @property
    def pinned(self) -> int:
        """How many tracks are pinned now."""
        return len(self._pinned)

    @property
    def in_memory(self) -> int:
        """How many tracks are in memory now."""
        return len(self._live)

    def __iter__(self) -> Iterator[PageTrack]:
        """Every track, in the order first stored; the ones in memory as they are."""
        if self._rows is None:
            yield from list(self._live.values())
            return
        self._write(list(self._live.values()))
        self._settle()
        for key, state in self._rows:
            live = self._live.get(key)
            yield live if live is not None else thaw(state)

    def _settle(self) -> None:
        """Add every waiting way found to its track on disk (a batch of keys at a time)."""
        assert self._rows is not None
        if self._late:
            self._write_late()
        while keys := self._rows.late_keys(SPILL_BATCH):
            caught_up = []
            for key in keys:
                state = self._rows.get(key)
                if state is None:  # its track was replaced: what waited was for the old one
                    self._rows.drop_late(key)
                    continue
                caught_up.append(self._caught_up(thaw(state)))
            self._write(caught_up)

    def _caught_up(self, track: PageTrack) -> PageTrack:
        """A track read from disk, with the ways found that waited for it added in order."""
        assert self._rows is not None
        waiting = self._late.pop(track.key, None)
        for reason, source in self._rows.late_for(track.key):
            track.add_discovery(reason, source)
        self._rows.drop_late(track.key)
        if waiting:
            self._late_count -= len(waiting)
            for reason, source in waiting:
                track.add_discovery(reason, source)
        return track

    def _write_late(self) -> None:
        """Move the waiting ways found to disk: one row per key, numbered to keep the order
        of a key's batches."""
        assert self._rows is not None
        rows = []
        for key, pairs in self._late.items():
            self._late_seq += 1
            rows.append((key, self._late_seq, pairs))
        self._rows.add_late(rows)
        self._late.clear()
        self._late_count = 0

    def _write_pairs(self, pairs: list[tuple[str, PageTrack]]) -> None:
        """The spill map's batch of least recently used tracks goes to disk."""
        self._write([track for _, track in pairs])

    def _write(self, tracks: list[PageTrack]) -> None:
        assert self._rows is not None
        self._rows.put_many([(track.key, freeze(track)) for track in tracks])
