"""`docscrawl merge OUT1 OUT2 ... -o OUT`: combine the part outputs of several workers.

The merged output is what one process crawling the site would have written. Which part
records and URLs are one page, its canonical URL, observed URLs and ways found are planned
by `docscrawl.inspect.consolidate` (the same canonical rule as one crawl's deduplication,
whatever order the pages arrived in); one record is written per page, renamed to the
chosen canonical URL when its part chose another, and chunks, structure records and log
events follow their page's new id. Crawl logs are interleaved by `ts` (each part is already
in time order, so this streams) and each line gains `part`, the name of the part directory
it came from. The merged log keeps the contract's invariant: a URL is `discovered` once
(its earliest discovery), and ends in exactly one terminal event, the best one any part
logged (extracted > unchanged > duplicate > failed > skipped; among equals, the one whose
record was kept); an `extracted` whose record was dropped as a copy becomes a `duplicate`
of the kept page; a URL that no part finished ends `failed` with reason `crawl_closed`.
run.json is recomputed from what was written: `complete` when every URL ended and no page
budget or depth limit cut the crawl, the run's real start, end and duration, the parts
merged and the workers that died (a part whose run.json still says `running`).
A dead part's page record whose outcome it never logged is left out with its lines:
it was killed between them, and another worker fetched the page again.

Memory holds one small entry per page and per URL, never a whole file.
"""

from __future__ import annotations

import heapq
import os
from collections import Counter
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any, TextIO

from docscrawl import __version__
from docscrawl.crawl.crawllog import utc_now
from docscrawl.crawl.updaters import log_updater, page_ref_updater
from docscrawl.dedup.content import sha256_id
from docscrawl.export.inbound import add_inbound_links
from docscrawl.inspect.consolidate import MergePlan, PageSummary, plan_merge
from docscrawl.inspect.output import OutputDir, OutputError, Progress
from docscrawl.jsonl import dumps_line, open_nofollow, write_json_atomic
from docscrawl.runs import new_run_dir, publish, remove_stale_runs
from docscrawl.vocab import WRITTEN, DuplicateReason, Event

__all__ = ["merge_outputs"]

TERMINAL_RANK = {"extracted": 0, "unchanged": 1, "duplicate": 2, "failed": 3, "skipped": 4}
CLOSED_RANK = 5  # failed/crawl_closed: the worker stopped first; anything else wins
LIMIT_REASONS = frozenset({"max_pages", "max_depth"})  # a cut crawl is not complete


def _terminal_rank(event: dict[str, Any]) -> int:
    if event.get("event") == "failed" and event.get("reason") == "crawl_closed":
        return CLOSED_RANK
    return TERMINAL_RANK[str(event["event"])]


def merge_outputs(parts: list[OutputDir], dest: Path, *, force: bool = False,
                  progress: Progress | None = None) -> dict[str, Any]:
    """Merge `parts` into `dest`; returns the merged run.json."""
    progress = progress or Progress(enabled=False)
    if not parts:
        raise OutputError("merge: no part directories given")
    _refuse_overlap(parts, dest)
    for part in parts:
        part.require("pages.jsonl", "crawl_log.jsonl")
    if dest.exists() and any(dest.iterdir()) and not force:
        raise OutputError(f"merge: {dest} is not empty (use --force to overwrite)")
    try:
        remove_stale_runs(dest)
        run_dir = new_run_dir(dest)  # published at the end: never a half-merged output
    except OSError as exc:
        raise OutputError(f"merge: {exc}") from None

    plan = plan_merge(_summaries(parts, progress), _all_events(parts))
    kept = {page.kept for page in plan.pages}
    best = _plan_terminals(parts, kept)
    labels = _labels(parts)
    pages_written = _write_pages(parts, plan, run_dir / "pages.jsonl")
    chunks_written = _write_follow(parts, kept, plan, run_dir / "chunks.jsonl",
                                   dedupe_ids=True)
    _write_follow(parts, kept, plan, run_dir / "structure.jsonl", dedupe_ids=False)
    add_inbound_links(run_dir)  # each part saw only its own pages' links
    counts, examples, first_ts, last_ts = _write_log(parts, labels, best, plan,
                                                     run_dir / "crawl_log.jsonl")
    progress.note(f"merge: {pages_written} pages, {chunks_written} chunks written to {dest}")
    run = _merged_run(parts, labels, counts, first_ts, last_ts)
    run.update({
        "pages_written": pages_written,
        "chunks_written": chunks_written,
        "records_renamed": len(plan.renames),
        "counts": counts,
        "skip_examples": examples,
        "output": {name: str(dest / name) for name in
                   ("pages.jsonl", "chunks.jsonl", "structure.jsonl", "crawl_log.jsonl")},
    })
    write_json_atomic(run_dir / "run.json", run)
    publish(dest, run_dir)
    return run


def _refuse_overlap(parts: list[OutputDir], dest: Path) -> None:
    """The destination must be none of the parts, nor hold one, nor lie inside one: the
    merge writes there (and `--force` replaces what is there) while reading the parts."""
    target = dest.resolve()
    for part in parts:
        source = part.path.resolve()
        if target == source:
            raise OutputError(f"merge: output {dest} is also one of the parts")
        if target.is_relative_to(source):
            raise OutputError(f"merge: output {dest} is inside part {part.path}")
        if source.is_relative_to(target):
            raise OutputError(f"merge: output {dest} contains part {part.path}")


def _merged_run(parts: list[OutputDir], labels: list[str], counts: dict[str, Any],
                first_ts: str | None, last_ts: str | None) -> dict[str, Any]:
    """run.json fields of the whole crawl: parts, dead workers, completeness, times."""
    merged_from = []
    for label, part in zip(labels, parts, strict=True):
        run = part.run
        died = _died(part)  # never reached its end: killed
        merged_from.append({
            "part": label, "path": str(part.path), "worker": run.get("worker"),
            "status": "died" if died else run.get("status"),
            "finish_reason": run.get("finish_reason"), "complete": run.get("complete"),
            "pages_written": run.get("pages_written"), "started_at": run.get("started_at"),
            "finished_at": run.get("finished_at") or (_last_ts(part) if died else None),
        })
    starts = [p["started_at"] for p in merged_from if p["started_at"]]
    ends = [p["finished_at"] for p in merged_from if p["finished_at"]]
    started = min(starts) if starts else first_ts
    finished = max(ends) if ends else last_ts
    limited = any(counts["skip_reasons"].get(reason) for reason in LIMIT_REASONS)
    first = parts[0].run
    return {
        "site": first.get("site"),
        "arguments": first.get("arguments"),
        "status": "finished",
        "finish_reason": "merged",
        "complete": counts["failure_reasons"].get("crawl_closed", 0) == 0 and not limited,
        "started_at": started,
        "finished_at": finished,
        "elapsed_s": _seconds_between(started, finished),
        "merged_at": utc_now(),
        "docscrawl_version": __version__,
        "merged_from": merged_from,
        "workers_died": [{"part": p["part"], "worker": p["worker"]} for p in merged_from
                         if p["status"] == "died"],
    }


def _last_ts(part: OutputDir) -> str | None:
    last = None
    for event in part.records("crawl_log.jsonl"):
        last = event.get("ts") or last
    return last


def _seconds_between(start: str | None, end: str | None) -> float | None:
    try:
        one = datetime.fromisoformat(str(start).replace("Z", "+00:00"))
        two = datetime.fromisoformat(str(end).replace("Z", "+00:00"))
    except ValueError:
        return None
    return round((two - one).total_seconds(), 3)


def _summaries(parts: list[OutputDir], progress: Progress) -> Iterator[PageSummary]:
    for index, part in enumerate(parts):
        logged = _logged_urls(part) if _died(part) else None
        left_out = 0
        for line, page in enumerate(part.records("pages.jsonl")):
            if logged is not None and logged.isdisjoint(_record_urls(page)):
                left_out += 1  # its chunks or its outcome were never written
                continue
            yield PageSummary.of(index, line, page)
        if left_out:
            progress.note(f"merge: {part.path} died; {left_out} page record(s) without a "
                          "logged outcome left out (fetched again by another worker, or "
                          "failed crawl_closed)")


def _died(part: OutputDir) -> bool:
    """A part whose run.json still says `running`: its worker was killed."""
    return part.run.get("status") == "running"


def _logged_urls(part: OutputDir) -> set[str]:
    """The URLs and canonical URLs of the pages a part's log ended `extracted` or
    `unchanged`. A page's lines are written pages, structure, chunks, then that event
    (`crawl.resume.roll_back_unlogged`): a worker killed in between left a page record
    whose chunks may be missing."""
    return {str(value) for event in part.records("crawl_log.jsonl")
            if event.get("event") in WRITTEN
            for value in (event.get("url"), event.get("canonical_url")) if value}


def _record_urls(record: dict[str, Any]) -> list[str]:
    """Every URL a page record names itself by: its event's URL is among them even when
    the record was renamed at the end of the crawl and the log not yet (a kill between
    the two rewrites, `crawl.finish._update_records`)."""
    return [str(url) for url in (record.get("canonical_url"), record.get("fetched_url"),
                                 record.get("final_url"), *(record.get("observed_urls") or ()))
            if url]


def _all_events(parts: list[OutputDir]) -> Iterator[tuple[int, dict[str, Any]]]:
    for index, part in enumerate(parts):
        for event in part.records("crawl_log.jsonl"):
            yield index, event


def _labels(parts: list[OutputDir]) -> list[str]:
    names = [part.path.name for part in parts]
    if len(set(names)) == len(names):
        return names
    return [f"{i}:{name}" for i, name in enumerate(names)]


def _plan_terminals(parts: list[OutputDir],
                    kept: set[tuple[int, str]]) -> dict[str, tuple[int, int, int]]:
    """url -> (rank, not kept, part) of the terminal event the merged log keeps: the best
    outcome, and among equals the one whose page record is the one written."""
    best: dict[str, tuple[int, int, int]] = {}
    for index, part in enumerate(parts):
        for event in part.records("crawl_log.jsonl"):
            if event.get("event") in TERMINAL_RANK:
                url = str(event.get("url"))
                written = (index, str(event.get("page_id"))) in kept
                candidate = (_terminal_rank(event), 0 if written else 1, index)
                if url not in best or candidate < best[url]:
                    best[url] = candidate
    return best


def _open(path: Path) -> TextIO:
    return open_nofollow(path)


def _close(handle: TextIO) -> None:
    handle.flush()
    os.fsync(handle.fileno())
    handle.close()


def _write_pages(parts: list[OutputDir], plan: MergePlan, path: Path) -> int:
    written = 0
    handle = _open(path)
    for index, part in enumerate(parts):
        for page in part.records("pages.jsonl"):
            merged = plan.owner.get((index, str(page.get("id"))))
            if merged is None or merged.kept != (index, str(page.get("id"))):
                continue
            page["id"] = sha256_id(merged.canonical_url)
            page["canonical_url"] = merged.canonical_url
            page["observed_urls"] = merged.observed_urls
            page["discovery"] = merged.discovery
            handle.write(dumps_line(page))
            written += 1
    _close(handle)
    return written


def _write_follow(parts: list[OutputDir], kept: set[tuple[int, str]], plan: MergePlan,
                  path: Path, *, dedupe_ids: bool) -> int:
    """Chunks or structure records of kept pages, renamed with their page."""
    name = path.name
    rename = page_ref_updater(plan.renames)
    written = 0
    seen: set[Any] = set()
    handle = _open(path)
    for index, part in enumerate(parts):
        for record in part.records(name):
            if (index, str(record.get("page_id"))) not in kept:
                continue
            if dedupe_ids:
                if record.get("id") in seen:
                    continue
                seen.add(record.get("id"))
            handle.write(dumps_line(rename(record)))
            written += 1
    _close(handle)
    return written


def _tagged(part: OutputDir, index: int) -> Iterator[tuple[str, int, dict[str, Any]]]:
    for event in part.records("crawl_log.jsonl"):
        yield str(event.get("ts") or ""), index, event


def _write_log(
    parts: list[OutputDir], labels: list[str], best: dict[str, tuple[int, int, int]],
    plan: MergePlan, path: Path,
) -> tuple[dict[str, Any], dict[str, Any], str | None, str | None]:
    events: Counter[str] = Counter()
    skips: Counter[str] = Counter()
    failures: Counter[str] = Counter()
    examples: dict[str, dict[str, Any]] = {}
    discovered: set[str] = set()
    ended: set[str] = set()
    first_ts: str | None = None
    last_ts: str | None = None
    rename = log_updater(plan.renames)
    kept = {page.kept for page in plan.pages}
    handle = _open(path)

    def emit(event: dict[str, Any]) -> None:
        kind = str(event.get("event"))
        events[kind] += 1
        if kind == "skipped" and event.get("reason"):
            skips[event["reason"]] += 1
            examples.setdefault(event["reason"], {"url": event["url"], "rule": event.get("rule")})
        elif kind == "failed" and event.get("reason"):
            failures[event["reason"]] += 1
        handle.write(dumps_line(event))

    streams = [_tagged(part, index) for index, part in enumerate(parts)]
    for ts, index, event in heapq.merge(*streams, key=lambda item: (item[0], item[1])):
        first_ts = first_ts or ts
        last_ts = ts
        url = str(event.get("url"))
        kind = event.get("event")
        event["part"] = labels[index]
        if kind == "discovered":
            if url in discovered:
                continue
            discovered.add(url)
        elif kind in TERMINAL_RANK:
            choice = best.get(url)
            if url in ended or choice is None or choice[2] != index:
                continue
            written = (index, str(event.get("page_id"))) in kept
            if (_terminal_rank(event), 0 if written else 1) != choice[:2]:
                continue
            ended.add(url)
            owner = plan.canonical_of(index, event.get("page_id"))
            if kind in WRITTEN and owner is not None and not written:
                event.update(event=Event.DUPLICATE, reason=DuplicateReason.MERGED,
                             duplicate_of=owner, canonical_url=owner, page_id=sha256_id(owner))
            event = rename(event)
        emit(event)
    for url in sorted(discovered - ended):
        emit({"ts": last_ts or utc_now(), "url": url, "event": "failed",
              "reason": "crawl_closed", "rule": "no part finished this URL (worker stopped)",
              "discovery": None, "status": None, "redirect_chain": [], "fetch_mode": None,
              "parser": None, "duplicate_of": None, "elapsed_ms": None, "bytes": None,
              "part": None})
    _close(handle)
    counts = {"events": dict(sorted(events.items())), "skip_reasons": dict(sorted(skips.items())),
              "failure_reasons": dict(sorted(failures.items())),
              "discovered": len(discovered), "open_at_end": 0}
    return counts, dict(sorted(examples.items())), first_ts, last_ts
