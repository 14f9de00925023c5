"""TrackStore: tracks past `keep` go to the ledger and come back with the same state."""

from __future__ import annotations

from docscrawl.crawl.ledger import Ledger
from docscrawl.discovery.pagetrack import PageTrack
from docscrawl.discovery.trackstore import TrackStore, freeze, thaw


def _track(n: int) -> PageTrack:
    url = f"https://docs.example.com/p{n}"
    track = PageTrack(url, url, n % 3, [("sitemap", None)], sitemap_lastmod="2026-01-01")
    track.add_discovery("in_page", f"https://docs.example.com/p{n - 1}")
    track.observe(url + "?utm_source=x")
    return track


def test_freeze_and_thaw_keep_every_field() -> None:
    track = _track(7)
    track.redirect_chain = ("https://docs.example.com/old",)
    track.mark_written("https://docs.example.com/p7")
    track.discovery_dropped = 3
    assert thaw(freeze(track)) == track


def test_least_recently_used_tracks_leave_memory_and_come_back(ledger: Ledger) -> None:
    store = TrackStore(ledger.track_table(), keep=4)
    tracks = [_track(n) for n in range(20)]
    for track in tracks:
        store.put(track)
    assert store.in_memory <= 8 and store.spilled >= 12
    first = store.get(tracks[0].key)
    assert first is not None and first is not tracks[0] and first == tracks[0]
    first.add_discovery("nav", "https://docs.example.com/index")
    for track in tracks[1:]:  # pushes the changed copy out again
        store.get(track.key)
    again = store.get(tracks[0].key)
    assert again is not None and again is not first
    assert ("nav", "https://docs.example.com/index") in again.discovery
    assert store.get("https://docs.example.com/missing") is None


def test_pinned_tracks_stay_the_same_object(ledger: Ledger) -> None:
    store = TrackStore(ledger.track_table(), keep=2)
    pinned = _track(0)
    store.put(pinned)
    store.pin(pinned)
    for n in range(1, 50):
        store.put(_track(n))
    assert store.get(pinned.key) is pinned
    store.release(pinned.key)
    for n in range(1, 50):
        store.get(_track(n).key)
    assert store.get(pinned.key) is not pinned


def test_iteration_gives_every_track_once_in_first_stored_order(ledger: Ledger) -> None:
    store = TrackStore(ledger.track_table(), keep=3)
    tracks = [_track(n) for n in range(30)]
    for track in tracks:
        store.put(track)
    store.get(tracks[5].key)  # used again: moves in memory, not in the order
    assert [t.key for t in store] == [t.key for t in tracks]
    assert list(store) == tracks


def test_without_a_table_everything_stays_in_memory() -> None:
    store = TrackStore(keep=1)
    tracks = [_track(n) for n in range(10)]
    for track in tracks:
        store.put(track)
    assert store.spilled == 0 and store.in_memory == 10
    assert all(store.get(t.key) is t for t in tracks)
    assert list(store) == tracks


def test_ways_found_for_tracks_on_disk_wait_and_are_added_in_order(ledger: Ledger) -> None:
    store = TrackStore(ledger.track_table(), keep=2)
    kept = TrackStore()  # the same additions, everything in memory
    for n in range(10):
        store.put(_track(n))
        kept.put(_track(n))
    cold = _track(0).key
    assert store.add_discovery(cold, "nav", "https://docs.example.com/a") is None
    kept.add_discovery(cold, "nav", "https://docs.example.com/a")
    assert store.deferred == 1
    for n in range(6000):  # past LATE_BATCH: the waiting ones go to disk, in order
        reason = "in_page" if n % 2 else "footer_navigation"
        for store_ in (store, kept):
            store_.add_discovery(_track(n % 10).key, reason, f"https://docs.example.com/s{n}")
    back = store.get(_track(3).key)
    assert back is not None and back == kept.get(_track(3).key)
    twice = [list(store), list(store)]  # iterating does not lose what waited
    assert twice[0] == twice[1]
    by_key = {t.key: t for t in kept}
    for track in twice[0]:
        expected = by_key[track.key]
        assert track.discovery == expected.discovery, track.key
        assert track.discovery_dropped == expected.discovery_dropped > 0
