"""The operator's view of a shared crawl: queue figures and workers, as plans the task
queue runs (`docscrawl.distributed.taskqueue`); the command line is `distributed/cli.py`.

Figures come from the stream itself where it can tell (`XLEN`, `XINFO GROUPS`, `XINFO
CONSUMERS`: pending entries per worker), the rest from the crawl's hashes.
"""

from __future__ import annotations

import json
from typing import Any

from docscrawl.distributed.streams import GROUP, QUEUE, Plan, Plans, Step, missing_group


def _consumers(plans: Plans) -> Plan[tuple[dict[str, int], dict[str, Any]]]:
    """Pending entries per consumer and the group's own figures (empty before any push)."""
    try:
        consumers, groups = yield Step([
            lambda p: p.xinfo_consumers(plans.stream, GROUP),
            lambda p: p.xinfo_groups(plans.stream)])
    except Exception as exc:
        if missing_group(exc):
            return {}, {}
        raise
    group: dict[str, Any] = next((g for g in groups if g.get("name") == GROUP), {})
    return {c["name"]: int(c["pending"]) for c in consumers}, group


def counts(plans: Plans) -> Plan[dict[str, Any]]:
    """Queue figures for progress lines and `status`."""
    k = plans.keys
    (pending, dead, seen, claimed, stats, state, workers) = yield Step([
        lambda p: p.xlen(k["tasks"]), lambda p: p.hlen(k["dead"]),
        lambda p: p.scard(k["seen"]), lambda p: p.hlen(k["claims"]),
        lambda p: p.hgetall(k["stats"]), lambda p: p.hgetall(k["state"]),
        lambda p: p.hlen(k["workers"])], atomic=True)
    held, group = yield from _consumers(plans)
    leased = sum(n for name, n in held.items() if name != QUEUE)
    pushed = int(stats.get("pushed", 0))
    return {
        "queued": max(0, int(pending) - leased),
        "leased": leased,
        "pending": int(pending),
        "done": max(0, pushed - int(pending) - int(stats.get("dead", 0))),
        "pushed": pushed,
        "requeued": int(stats.get("requeued", 0)),
        "dead": int(dead),
        "discovered": int(seen),
        "claimed": int(claimed),
        "admitted": int(stats.get("admitted", 0)),
        "workers": int(workers),
        "delivered": int(group.get("entries-read") or 0),
        "started": "started" in state,
        "finished": "finished" in state,
    }


def workers(plans: Plans, lease_seconds: float) -> Plan[dict[str, dict[str, Any]]]:
    """Every registered worker: its info, `last_seen`, `silent_seconds`, `leases` (its
    pending entries) and `state` (see `worker_state`)."""
    k = plans.keys
    info, seen, (seconds, micros) = yield Step([
        lambda p: p.hgetall(k["workers"]), lambda p: p.hgetall(k["workers_seen"]),
        lambda p: p.time()])
    held, _group = yield from _consumers(plans)
    now = float(seconds) + float(micros) / 1_000_000
    result: dict[str, dict[str, Any]] = {}
    for worker in sorted(set(info) | set(seen)):
        last = float(seen[worker]) if worker in seen else None
        record = json.loads(info.get(worker) or "{}")
        leases = held.get(worker, 0)
        silent = round(now - last, 3) if last is not None else None
        lease = float(record.get("lease") or lease_seconds)
        result[worker] = {**record, "last_seen": last, "silent_seconds": silent,
                          "leases": leases, "state": worker_state(record, silent, leases, lease)}
    return result


def worker_state(info: dict[str, Any], silent: float | None, leases: int,
                 lease_seconds: float) -> str:
    """`finished` (stopped cleanly), `live` (heard from within its lease), `silent` (not
    heard from, holds nothing: nothing waits on it) or `dead_or_stuck` (not heard from
    within the lease and still holding leases: the one to look at)."""
    if info.get("finished_at") is not None and leases == 0:
        return "finished"
    if silent is not None and silent < lease_seconds:
        return "live"
    return "dead_or_stuck" if leases else "silent"
