"""`docscrawl merge OUT1 OUT2 ... -o OUT`: combine the part outputs of several workers.

Pages are deduplicated by canonical URL and by content hash within a version (the same
rule as one crawl's content deduplication): the first part that holds a page keeps its
record, which gains the `observed_urls` and `discovery` of the copies dropped from later
parts; chunks and structure records follow their page. Crawl logs are interleaved by
`ts` (each part is already in time order, so this streams) and each line gains `part`,
the name of the part directory it came from. The merged log keeps the contract's
invariant: a URL is `discovered` once (its earliest discovery), and ends in exactly one
terminal event, the best one any part logged (extracted > unchanged > duplicate > failed
> skipped); an `extracted` whose page was dropped as a copy becomes a `duplicate` of the
kept page; a URL that no part finished (a worker killed with `kill -9`) ends `failed`
with reason `crawl_closed`. run.json is recomputed from what was written.

Memory holds one small entry per page and per URL, never a whole file.
"""

from __future__ import annotations

import heapq
import os
import shutil
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from docscrawl import __version__
from docscrawl.crawllog import utc_now
from docscrawl.inspect.output import OutputDir, OutputError, Progress
from docscrawl.jsonl import dumps_line, write_json_atomic
from docscrawl.linkgraph import add_inbound_links

__all__ = ["merge_outputs"]

TERMINAL_RANK = {"extracted": 0, "unchanged": 1, "duplicate": 2, "failed": 3, "skipped": 4}
CLOSED_RANK = 5  # failed/crawl_closed: the worker stopped first; anything else wins


class _Kept:
    """A page record kept from one part, and what its dropped copies add to it."""

    __slots__ = ("discovery", "id", "observed", "part")

    def __init__(self, part: int, page: dict[str, Any]) -> None:
        self.part = part
        self.id = page.get("id")
        self.observed: dict[str, None] = dict.fromkeys(page.get("observed_urls") or ())
        self.discovery: list[dict[str, Any]] = list(page.get("discovery") or ())

    def absorb(self, page: dict[str, Any]) -> None:
        for url in (page.get("canonical_url"), page.get("final_url"),
                    *(page.get("observed_urls") or ())):
            if url:
                self.observed.setdefault(url, None)
        for item in page.get("discovery") or ():
            if item not in self.discovery:
                self.discovery.append(item)


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
    if any(part.path.resolve() == dest.resolve() for part in parts):
        raise OutputError(f"merge: output {dest} is also one of the parts")
    for part in parts:
        part.require("pages.jsonl", "crawl_log.jsonl")
    if dest.exists() and any(dest.iterdir()):
        if not force:
            raise OutputError(f"merge: {dest} is not empty (use --force to overwrite)")
        shutil.rmtree(dest)
    dest.mkdir(parents=True, exist_ok=True)

    kept, dropped = _plan_pages(parts)
    best = _plan_terminals(parts)
    labels = _labels(parts)
    pages_written = _write_pages(parts, kept, dest / "pages.jsonl")
    kept_ids = {(entry.part, entry.id) for entry in kept.values()}
    chunks_written = _write_follow(parts, kept_ids, dest / "chunks.jsonl", dedupe_ids=True)
    _write_follow(parts, kept_ids, dest / "structure.jsonl", dedupe_ids=False)
    add_inbound_links(dest)  # each part saw only its own pages' links
    counts, examples, first_ts, last_ts = _write_log(parts, labels, best, dropped,
                                                     dest / "crawl_log.jsonl")
    progress.note(f"merge: {pages_written} pages, {chunks_written} chunks written to {dest}")
    runs = [part.run for part in parts]
    run = {
        "site": runs[0].get("site"),
        "arguments": runs[0].get("arguments"),
        "status": "finished",
        "finish_reason": "merged",
        "complete": all(r.get("complete") is True for r in runs)
        and counts["failure_reasons"].get("crawl_closed", 0) == 0,
        "started_at": min((r.get("started_at") or first_ts or "") for r in runs) or first_ts,
        "finished_at": max((r.get("finished_at") or last_ts or "") for r in runs) or last_ts,
        "merged_at": utc_now(),
        "docscrawl_version": __version__,
        "pages_written": pages_written,
        "chunks_written": chunks_written,
        "counts": counts,
        "skip_examples": examples,
        "merged_from": [{"part": labels[i], "path": str(p.path), "status": p.run.get("status"),
                         "complete": p.run.get("complete"),
                         "pages_written": p.run.get("pages_written")}
                        for i, p in enumerate(parts)],
        "output": {name: str(dest / name) for name in
                   ("pages.jsonl", "chunks.jsonl", "structure.jsonl", "crawl_log.jsonl")},
    }
    write_json_atomic(dest / "run.json", run)
    return run


def _labels(parts: list[OutputDir]) -> list[str]:
    names = [part.path.name for part in parts]
    if len(set(names)) == len(names):
        return names
    return [f"{i}:{name}" for i, name in enumerate(names)]


def _plan_pages(parts: list[OutputDir]) -> tuple[dict[str, _Kept], dict[tuple[int, Any], str]]:
    """Which page record to keep for each canonical URL / content; dropped -> kept URL."""
    kept: dict[str, _Kept] = {}  # canonical URL -> kept record
    by_hash: dict[tuple[Any, Any], str] = {}  # (content_hash, version) -> canonical URL
    dropped: dict[tuple[int, Any], str] = {}  # (part, page id) -> kept canonical URL
    for index, part in enumerate(parts):
        for page in part.records("pages.jsonl"):
            canonical = str(page.get("canonical_url"))
            version = (page.get("version") or {}).get("value")
            content = (page.get("content_hash"), version)
            owner = canonical if canonical in kept else by_hash.get(content)
            if owner is not None:
                kept[owner].absorb(page)
                dropped[(index, page.get("id"))] = owner
                continue
            kept[canonical] = _Kept(index, page)
            if page.get("content_hash"):
                by_hash.setdefault(content, canonical)
    return kept, dropped


def _plan_terminals(parts: list[OutputDir]) -> dict[str, tuple[int, int]]:
    """url -> (rank, part) of the terminal event the merged log keeps."""
    best: dict[str, tuple[int, int]] = {}
    for index, part in enumerate(parts):
        for event in part.records("crawl_log.jsonl"):
            if event.get("event") in TERMINAL_RANK:
                url = str(event.get("url"))
                candidate = (_terminal_rank(event), index)
                if url not in best or candidate < best[url]:
                    best[url] = candidate
    return best


def _open(path: Path) -> TextIO:
    return path.open("w", encoding="utf-8")


def _close(handle: TextIO) -> None:
    handle.flush()
    os.fsync(handle.fileno())
    handle.close()


def _write_pages(parts: list[OutputDir], kept: dict[str, _Kept], path: Path) -> int:
    written = 0
    handle = _open(path)
    for index, part in enumerate(parts):
        for page in part.records("pages.jsonl"):
            entry = kept.get(str(page.get("canonical_url")))
            if entry is None or entry.part != index or entry.id != page.get("id"):
                continue
            page["observed_urls"] = list(entry.observed)
            page["discovery"] = entry.discovery
            handle.write(dumps_line(page))
            written += 1
    _close(handle)
    return written


def _write_follow(parts: list[OutputDir], kept_ids: set[tuple[int, Any]], path: Path, *,
                  dedupe_ids: bool) -> int:
    """Chunks or structure records of kept pages."""
    name = path.name
    written = 0
    seen: set[Any] = set()
    handle = _open(path)
    for index, part in enumerate(parts):
        for record in part.records(name):
            if (index, record.get("page_id")) not in kept_ids:
                continue
            if dedupe_ids:
                if record.get("id") in seen:
                    continue
                seen.add(record.get("id"))
            handle.write(dumps_line(record))
            written += 1
    _close(handle)
    return written


def _tagged(part: OutputDir, index: int) -> Iterator[tuple[str, int, dict[str, Any]]]:
    for event in part.records("crawl_log.jsonl"):
        yield str(event.get("ts") or ""), index, event


def _write_log(
    parts: list[OutputDir], labels: list[str], best: dict[str, tuple[int, int]],
    dropped: dict[tuple[int, Any], str], path: Path,
) -> tuple[dict[str, Any], dict[str, Any], str | None, str | None]:
    events: Counter[str] = Counter()
    skips: Counter[str] = Counter()
    failures: Counter[str] = Counter()
    examples: dict[str, dict[str, Any]] = {}
    discovered: set[str] = set()
    ended: set[str] = set()
    first_ts: str | None = None
    last_ts: str | None = None
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
            if url in ended or best.get(url, (None, None))[1] != index:
                continue
            if _terminal_rank(event) != best[url][0]:
                continue
            ended.add(url)
            owner = dropped.get((index, event.get("page_id")))
            if kind == "extracted" and owner is not None:
                event.update(event="duplicate", reason="merged", duplicate_of=owner,
                             canonical_url=owner)
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
