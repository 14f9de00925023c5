"""Compare two crawl outputs of one site field by field, on what a reader of the output sees.

Only what does not depend on the order pages were fetched in is compared, since two
single-process crawls may fetch in different orders too: which spelling of a page was
requested first (`fetched_url`, `redirect_chain`, which URL is `extracted` and which a
`duplicate`) is order; the page set, each page's id, canonical URL, every URL observed
serving it, its content, and what became of every discovered URL are not.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from docscrawl.discovery.urls import normalize_url

TERMINAL = ("extracted", "duplicate", "unchanged", "skipped", "failed")
PAGE_FIELDS = ("id", "canonical_url", "title", "main_heading", "content_hash", "markdown",
               "generator", "version")


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


class Output:
    """One output directory, read for comparison."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.pages = {p["canonical_url"]: p for p in read_jsonl(path / "pages.jsonl")}
        self.log = read_jsonl(path / "crawl_log.jsonl")
        self.run = json.loads((path / "run.json").read_text(encoding="utf-8"))
        self.chunks = read_jsonl(path / "chunks.jsonl")
        self._page_of: dict[str, str] = {}
        for canonical, page in self.pages.items():
            for url in (canonical, page["final_url"], *page["observed_urls"]):
                self._page_of.setdefault(normalize_url(url), canonical)

    def page_of(self, url: str | None) -> str | None:
        """The canonical URL of the page a URL (any spelling) ended in."""
        return self._page_of.get(normalize_url(url)) if url else None

    def terminals(self) -> dict[str, list[dict[str, Any]]]:
        ends: dict[str, list[dict[str, Any]]] = {}
        for event in self.log:
            if event["event"] in TERMINAL:
                ends.setdefault(event["url"], []).append(event)
        return ends

    def outcome(self, event: dict[str, Any]) -> tuple[Any, ...]:
        """What became of a URL, independent of fetch order: the page it serves (fetched,
        duplicate, redirect, tracking variant), else the event and its reason."""
        kind, reason = event["event"], event.get("reason")
        if kind in ("extracted", "unchanged"):
            return ("page", self.page_of(event.get("canonical_url") or event["url"]))
        if kind == "duplicate":
            via = "redirect" if reason in ("redirect", "meta_refresh") else "page"
            return (via, self.page_of(event.get("duplicate_of")))
        if kind == "skipped" and reason == "duplicate_url":  # fetched at another spelling
            return ("page", self.page_of(event.get("rule")))
        return (kind, reason)


def differences(expected: Output, actual: Output) -> list[str]:
    """Every difference between two outputs, one line each (empty: the same crawl)."""
    found: list[str] = []
    if set(expected.pages) != set(actual.pages):
        found.append(f"page set: missing {sorted(set(expected.pages) - set(actual.pages))}, "
                     f"extra {sorted(set(actual.pages) - set(expected.pages))}")
    for canonical in sorted(set(expected.pages) & set(actual.pages)):
        one, two = expected.pages[canonical], actual.pages[canonical]
        for field in PAGE_FIELDS:
            if one.get(field) != two.get(field):
                found.append(f"{canonical}: {field} differs")
        if set(one["observed_urls"]) != set(two["observed_urls"]):
            found.append(f"{canonical}: observed_urls missing "
                         f"{sorted(set(one['observed_urls']) - set(two['observed_urls']))}, "
                         f"extra {sorted(set(two['observed_urls']) - set(one['observed_urls']))}")
        found += _discovery_differences(canonical, one, two)
    found += _log_differences(expected, actual)
    for field in ("complete", "pages_written", "chunks_written"):
        if expected.run.get(field) != actual.run.get(field):
            found.append(f"run.json {field}: {expected.run.get(field)!r} != "
                         f"{actual.run.get(field)!r}")
    page_ids = {p["id"] for p in actual.pages.values()}
    orphans = [c["id"] for c in actual.chunks if c["page_id"] not in page_ids]
    if orphans:
        found.append(f"{len(orphans)} chunks name a page_id found in no page record")
    return found


def _discovery_differences(canonical: str, one: dict[str, Any],
                           two: dict[str, Any]) -> list[str]:
    """The reasons a page was found, and the redirects that lead to it. (Which linking
    pages are listed is not compared: one crawl lists the first ones it met, and a worker
    does not see the links that other workers found to a page it wrote.)"""
    found = []
    reasons = ({d["reason"] for d in one["discovery"]}, {d["reason"] for d in two["discovery"]})
    if reasons[0] != reasons[1]:
        found.append(f"{canonical}: discovery reasons {sorted(reasons[0])} != "
                     f"{sorted(reasons[1])}")
    redirects = [{d["from"] for d in page["discovery"] if d["reason"] == "redirect"}
                 for page in (one, two)]
    if redirects[0] != redirects[1]:
        found.append(f"{canonical}: redirects missing {sorted(redirects[0] - redirects[1])}, "
                     f"extra {sorted(redirects[1] - redirects[0])}")
    return found


def _log_differences(expected: Output, actual: Output) -> list[str]:
    found = []
    discovered = [e["url"] for e in actual.log if e["event"] == "discovered"]
    if len(discovered) != len(set(discovered)):
        found.append("a URL is logged discovered twice")
    one, two = expected.terminals(), actual.terminals()
    for url in sorted(set(discovered) - set(two)):
        found.append(f"{url}: discovered, no terminal event")
    for url, events in sorted(two.items()):
        if len(events) != 1:
            found.append(f"{url}: {len(events)} terminal events")
    if set(one) != set(two):
        found.append(f"URLs ended: missing {sorted(set(one) - set(two))}, "
                     f"extra {sorted(set(two) - set(one))}")
    for url in sorted(set(one) & set(two)):
        want, got = expected.outcome(one[url][0]), actual.outcome(two[url][0])
        if want != got:
            found.append(f"{url}: outcome {want} != {got}")
    return found
