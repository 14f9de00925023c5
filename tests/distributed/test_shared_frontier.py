"""SharedFrontier against a real redis-server: claims, queue, leases, end of crawl."""

from __future__ import annotations

import time

import pytest

from docscrawl.discovery.pagetrack import PageTrack
from docscrawl.distributed import SharedFrontier, task_from_track, track_from_task
from tests.distributed.clock import age
from tests.distributed.conftest import LEASE, RedisServer


def task(n: int, **extra: object) -> dict:
    return {"url": f"https://docs.example/p{n}", "key": f"https://docs.example/p{n}",
            "depth": 1, "discovery": [{"reason": "sidebar", "from": None}], **extra}


def test_first_discovery_is_true_once(shared: SharedFrontier) -> None:
    assert shared.first_discovery("https://docs.example/a") is True
    assert shared.first_discovery("https://docs.example/a") is False
    assert shared.first_discovery("https://docs.example/a?x=1") is True
    assert shared.counts()["discovered"] == 2


def test_a_first_discovery_stays_untold_until_its_story_is_written(
    shared: SharedFrontier,
) -> None:
    """A worker killed between discovering a URL first and logging it leaves it untold:
    the next worker that meets it tells its story."""
    url = "https://docs.example/a?utm_source=x"
    assert shared.first_discovery(url)
    assert shared.untold(url)
    assert not shared.first_discovery(url)  # the second worker stays quiet ...
    assert shared.untold(url)  # ... unless the first never wrote it
    shared.told(url)
    assert not shared.untold(url)
    assert not shared.first_discovery(url)


def test_claim_returns_none_for_the_claimer_and_the_owner_for_others(
    shared: SharedFrontier,
) -> None:
    assert shared.claim("https://docs.example/a", "w1 https://docs.example/a/") is None
    assert shared.claim("https://docs.example/a", "w2 https://docs.example/a") == (
        "w1 https://docs.example/a/")
    assert shared.claim("https://docs.example/a", "w1 https://docs.example/a/") is not None
    assert shared.owner_of("https://docs.example/a") == "w1 https://docs.example/a/"
    assert shared.owner_of("https://docs.example/b") is None


def test_push_pop_ack_in_fifo_order(shared: SharedFrontier) -> None:
    ids = [shared.push(task(n)) for n in range(3)]
    assert len(set(ids)) == 3
    assert shared.pending() == 3
    first = shared.pop("w1")
    assert first is not None
    assert first["url"] == "https://docs.example/p0"
    assert first["task_id"] == ids[0]
    assert first["deliveries"] == 1
    assert first["discovery"] == [{"reason": "sidebar", "from": None}]
    counts = shared.counts()
    assert (counts["queued"], counts["leased"], counts["pending"]) == (2, 1, 3)
    assert shared.leases_of("w1") == [ids[0]]
    assert shared.ack(first["task_id"]) is True
    assert shared.ack(first["task_id"]) is False  # a second ack changes nothing
    assert shared.pending() == 2
    rest = [shared.pop("w2"), shared.pop("w2")]
    assert [t["url"] for t in rest if t] == ["https://docs.example/p1", "https://docs.example/p2"]
    assert shared.pop("w2") is None
    for t in rest:
        assert t is not None
        shared.ack(t["task_id"])
    counts = shared.counts()
    assert (counts["pending"], counts["done"], counts["pushed"]) == (0, 3, 3)


def test_pop_waits_up_to_timeout(shared: SharedFrontier) -> None:
    started = time.monotonic()
    assert shared.pop("w1", timeout=0.3) is None
    assert time.monotonic() - started >= 0.25  # it blocked (how much longer: the load's)


def test_push_needs_a_url(shared: SharedFrontier) -> None:
    with pytest.raises(ValueError, match="url"):
        shared.push({"depth": 1})


def test_expired_lease_returns_to_the_head_of_the_queue(shared: SharedFrontier) -> None:
    shared.push(task(1))
    shared.push(task(2))
    held = shared.pop("dead-worker")
    assert held is not None
    age(shared, LEASE - 1)
    assert shared.requeue_expired() == 0  # a second of the lease left
    age(shared, 2)
    assert shared.requeue_expired() == 1
    counts = shared.counts()
    assert (counts["leased"], counts["queued"], counts["requeued"]) == (0, 2, 1)
    again = shared.pop("w2")
    assert again is not None
    assert again["task_id"] == held["task_id"]  # retried before newer work
    assert again["deliveries"] == 2
    assert shared.leases_of("dead-worker") == []


def test_pop_requeues_expired_leases_by_itself(shared: SharedFrontier) -> None:
    shared.push(task(1))
    held = shared.pop("dead-worker")
    assert held is not None
    assert shared.pop("w2") is None
    age(shared, LEASE + 1)
    again = shared.pop("w2", timeout=2)
    assert again is not None
    assert again["task_id"] == held["task_id"]


def test_requeue_expired_with_an_explicit_clock(shared: SharedFrontier) -> None:
    shared.push(task(1))
    assert shared.pop("w1") is not None
    now = shared.server_time()
    assert shared.requeue_expired(now=now) == 0
    assert shared.requeue_expired(now=now + LEASE + 1) == 1


def test_heartbeat_and_extend_keep_leases_alive(shared: SharedFrontier) -> None:
    shared.push(task(1))
    shared.push(task(2))
    a = shared.pop("w1")
    b = shared.pop("w1")
    assert a is not None and b is not None
    for _ in range(4):
        age(shared, LEASE * 0.6)  # 2.4 leases in all, renewed every 0.6
        assert shared.heartbeat("w1") == 2
    assert shared.requeue_expired() == 0
    assert shared.extend(a["task_id"], worker_id="someone-else") is False
    assert shared.extend(a["task_id"], worker_id="w1") is True
    shared.ack(b["task_id"])
    assert shared.extend(b["task_id"]) is False  # acked: no lease any more
    age(shared, LEASE + 1)
    assert shared.requeue_expired() == 1


def test_a_late_ack_of_an_expired_task_still_completes_it(shared: SharedFrontier) -> None:
    shared.push(task(1))
    slow = shared.pop("slow")
    assert slow is not None
    age(shared, LEASE + 1)
    assert shared.requeue_expired() == 1
    assert shared.ack(slow["task_id"]) is True  # the slow worker did finish it
    assert shared.pop("w2") is None  # the stale queue entry is skipped
    assert shared.pending() == 0


def test_release_worker_gives_leases_back_at_once(shared: SharedFrontier) -> None:
    for n in range(3):
        shared.push(task(n))
    popped = [shared.pop("stopping") for _ in range(2)]
    assert shared.release_worker("stopping") == 2
    assert shared.leases_of("stopping") == []
    again = shared.pop("w2")
    assert again is not None
    assert again["task_id"] in {t["task_id"] for t in popped if t}
    assert again["deliveries"] == 1  # a graceful release is not a failed delivery
    assert shared.release(again["task_id"]) == 1


def test_poison_task_goes_to_dead_letters(redis_server: RedisServer, crawl_key: str) -> None:
    shared = SharedFrontier(redis_server.url, crawl_key, lease_seconds=LEASE, max_deliveries=2)
    try:
        shared.push(task(1))
        for _ in range(2):
            assert shared.pop("crashy") is not None
            age(shared, LEASE + 1)
        assert shared.pop("w2") is None  # second expiry: given up, not re-delivered
        assert [t["url"] for t in shared.dead_tasks()] == ["https://docs.example/p1"]
        counts = shared.counts()
        assert (counts["dead"], counts["pending"]) == (1, 0)
    finally:
        shared.reset()
        shared.close()


def test_claim_and_push_is_one_step_and_honours_max_pages(shared: SharedFrontier) -> None:
    first = shared.claim_and_push("k1", "w1", task(1), max_pages=2)
    assert first.queued and first.task_id
    dup = shared.claim_and_push("k1", "w2", task(1), max_pages=2)
    assert (dup.status, dup.owner) == ("duplicate", "w1")
    assert shared.claim_and_push("k2", "w1", task(2), max_pages=2).queued
    limited = shared.claim_and_push("k3", "w1", task(3), max_pages=2)
    assert limited.status == "max_pages"
    assert shared.owner_of("k3") is None
    redirect = shared.claim_and_push("k4", "w1", task(4), max_pages=2, takes_slot=False)
    assert redirect.queued  # a redirect target continues its source's slot
    counts = shared.counts()
    assert (counts["pending"], counts["admitted"], counts["claimed"]) == (3, 2, 3)


def test_crawl_is_finished_after_a_quiet_period_with_nothing_pending(
    shared: SharedFrontier,
) -> None:
    assert shared.mark_done_if_idle(0) is False  # nothing started yet
    shared.push(task(1))
    assert shared.mark_done_if_idle(0) is False
    popped = shared.pop("w1")
    assert popped is not None
    assert shared.mark_done_if_idle(0) is False  # leased is still pending
    shared.ack(popped["task_id"])
    assert shared.mark_done_if_idle(0.3) is False  # the quiet period starts
    assert shared.is_finished() is False
    age(shared, 0.35)
    assert shared.mark_done_if_idle(0.3) is True
    assert shared.is_finished() is True
    shared.push(task(2))  # a late discovery reopens the crawl
    assert shared.is_finished() is False


def test_mark_started_lets_an_empty_crawl_finish(shared: SharedFrontier) -> None:
    shared.mark_started()
    assert shared.mark_done_if_idle(0) is True


def test_reset_deletes_only_its_own_crawl(redis_server: RedisServer) -> None:
    a = SharedFrontier(redis_server.url, "reset-a", lease_seconds=5)
    b = SharedFrontier(redis_server.url, "reset-b", lease_seconds=5)
    try:
        for shared in (a, b):
            shared.reset()
            shared.first_discovery("https://docs.example/")
            shared.claim_and_push("https://docs.example/", "w1", task(0))
            shared.register_worker("w1", {"out": "part-1"})
            assert shared.pop("w1") is not None
        assert a.reset() > 0
        assert a.counts()["pending"] == 0
        assert a.first_discovery("https://docs.example/") is True
        assert a.claim("https://docs.example/", "w9") is None
        counts = b.counts()
        assert (counts["pending"], counts["leased"], counts["claimed"]) == (1, 1, 1)
        assert b.first_discovery("https://docs.example/") is False
        assert list(b.workers()) == ["w1"]
        assert a.redis.keys("docscrawl:{reset-a}:*")
        assert set(a.redis.keys("docscrawl:{reset-b}:*")) <= set(b.keys.values())
    finally:
        a.reset()
        b.reset()
        a.close()
        b.close()


def test_workers_report_silence_and_leases(shared: SharedFrontier) -> None:
    shared.register_worker("w1", {"host": "h1", "out": "OUT/part-1"})
    shared.push(task(1))
    assert shared.pop("w1") is not None
    info = shared.workers()["w1"]
    assert info["host"] == "h1"
    assert info["leases"] == 1
    assert 0 <= info["silent_seconds"] < 5
    assert info["state"] == "live"


def test_workers_tell_finished_from_dead(shared: SharedFrontier) -> None:
    """Only a silent worker still holding leases is flagged; one that stopped cleanly is
    shown finished however long ago it stopped."""
    for worker in ("done", "holder", "idle"):
        shared.register_worker(worker)
    shared.push(task(1))
    assert shared.pop("holder") is not None
    shared.finish_worker("done")
    age(shared, LEASE + 1)
    states = {worker: info["state"] for worker, info in shared.workers().items()}
    assert states == {"done": "finished", "holder": "dead_or_stuck", "idle": "silent"}
    assert shared.workers()["done"]["silent_seconds"] > shared.lease_seconds
    shared.register_worker("done")  # the same id started again: live, not finished
    assert shared.workers()["done"]["state"] == "live"


def test_task_round_trip_keeps_redirect_data(shared: SharedFrontier) -> None:
    track = PageTrack(url="https://docs.example/new", key="https://docs.example/new",
                      depth=3, discovery=[("redirect", "https://docs.example/old")],
                      sitemap_lastmod="2026-01-01", redirect_chain=["https://docs.example/old"],
                      fetched_url="https://docs.example/old")
    track.observe("https://docs.example/old")
    track.observe("https://docs.example/new")
    shared.push(task_from_track(track))
    popped = shared.pop("w1")
    assert popped is not None
    rebuilt = track_from_task(popped)
    assert rebuilt == track


def test_bad_arguments_are_refused(redis_server: RedisServer) -> None:
    with pytest.raises(ValueError):
        SharedFrontier(redis_server.url, "")
    with pytest.raises(ValueError):
        SharedFrontier(redis_server.url, "a{b}")
    with pytest.raises(ValueError):
        SharedFrontier(redis_server.url, "k", lease_seconds=0)


def test_a_restarted_worker_id_gives_back_its_old_leases(shared: SharedFrontier) -> None:
    shared.push(task(1))
    assert shared.register_worker("part-1") == 0
    held = shared.pop("part-1")
    assert held is not None
    assert shared.register_worker("part-1", {"restarted": True}) == 1  # same id, new process
    assert shared.leases_of("part-1") == []
    again = shared.pop("part-2")
    assert again is not None
    assert again["task_id"] == held["task_id"]


def test_an_expired_lease_behind_many_live_ones_is_recovered(shared: SharedFrontier) -> None:
    """XAUTOCLAIM looks at 10 x COUNT pending entries per call: the take starts its scan at
    the first expired entry, so live leases ahead of it cannot hide it."""
    ids = [shared.push(task(n)) for n in range(25)]
    assert len(shared.take("live", 20)) == 20
    assert len(shared.take("dead", 5)) == 5
    age(shared, LEASE * 0.6)
    shared.heartbeat("live")
    age(shared, LEASE * 0.6)
    taken = shared.take("w2", 1)
    assert [t["task_id"] for t in taken] == [ids[20]]
    assert taken[0]["deliveries"] == 2
