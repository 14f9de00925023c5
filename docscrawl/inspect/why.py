"""`docscrawl why OUT URL` (or `URL OUT`): the whole history of one URL in one crawl.

`url_history` streams crawl_log.jsonl, pages.jsonl and chunks.jsonl once each and keeps
only what concerns the URL: the events about it (and about the other spellings that
normalize to the same URL), the page record it ended in, that page's chunk ids, and the
pages that link to it. For a URL the crawl never discovered it says so, lists the nearest
discovered URLs and replays the rules that would have applied: the scope from run.json's
arguments (`docscrawl.discovery.scope.Scope`), file extensions that are never HTML, the
private-address guard for address literals, and the robots.txt rules seen in the log.
"""

from __future__ import annotations

import difflib
import heapq
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from docscrawl.discovery.frontier import NON_HTML_EXTENSIONS, extension_of, origin_of
from docscrawl.discovery.netguard import AddressGuard
from docscrawl.discovery.robots import RobotsPolicy
from docscrawl.discovery.scope import Scope
from docscrawl.discovery.urls import is_crawlable_url, normalize_url, strip_fragment
from docscrawl.inspect.log import format_event
from docscrawl.inspect.output import OutputDir
from docscrawl.vocab import TERMINAL

__all__ = ["format_history", "output_and_url", "url_history"]

# Discovery reason -> the page region the link sat in (README, "Discovery").
DISCOVERY_REGION = {
    "sidebar": "sidebar_navigation", "table_of_contents": "table_of_contents",
    "in_page": "main_content", "pagination": "pagination", "breadcrumb": "breadcrumb",
    "primary_navigation": "primary_navigation", "footer_navigation": "footer_navigation",
}
REF_FIELDS = ("duplicate_of", "redirect_to", "response_url", "canonical_url")
MAX_LINKERS = 20
MAX_CHUNKS = 50


def output_and_url(first: str, second: str) -> tuple[Path, str]:
    """The output directory and the URL of `docscrawl why`, given in either order: the
    other commands take OUT first, and this one long took URL first, so both are read.
    An existing directory is the output (one holding run.json when both are); else an
    argument with a scheme (`https://`) is the URL; else the order is OUT URL."""
    first_dir, second_dir = Path(first).is_dir(), Path(second).is_dir()
    if first_dir and second_dir:  # a relative URL that names a directory here as well
        first_dir = (Path(first) / "run.json").is_file() or not (
            Path(second) / "run.json").is_file()
        second_dir = not first_dir
    if first_dir != second_dir:
        return (Path(first), second) if first_dir else (Path(second), first)
    if "://" in first and "://" not in second:
        return Path(second), first
    return Path(first), second


def _normalized(url: str) -> str | None:
    try:
        return normalize_url(url) if is_crawlable_url(url) else None
    except ValueError:
        return None


def url_history(out: OutputDir, url: str, *, nearest: int = 5) -> dict[str, Any]:
    """Everything the output says about `url`, JSON-ready."""
    out.require("crawl_log.jsonl")
    target = strip_fragment(url.strip())
    norm = _normalized(target)
    names = {target} | ({norm} if norm else set())
    log = _scan_log(out, target, names, nearest)
    pages, linkers = _scan_pages(out, names | set(log["aliases"]))
    page_ids = {page["id"] for page in pages}
    chunks, chunk_count = _scan_chunks(out, page_ids)
    outcomes = {e["url"]: e for e in log["events"]
                if e["event"] in TERMINAL and e["url"] in log["aliases"]}
    result: dict[str, Any] = {
        "url": target,
        "normalized": norm,
        "output": str(out.path),
        "discovered": bool(log["discovery"]),
        "aliases": sorted(log["aliases"] - {target}),
        "discovery": log["discovery"],
        "events": log["events"],
        "outcome": outcomes.get(target) or next(iter(outcomes.values()), None),
        "outcomes": outcomes,
        "pages": pages,
        "chunk_ids": chunks,
        "chunk_count": chunk_count,
        "linked_from": linkers,
    }
    if not result["discovered"] and not pages:
        result["nearest"] = log["nearest"]
        result["rules"] = would_apply(out, target, log["robots"])
    return result


def _scan_log(out: OutputDir, target: str, names: set[str], nearest: int) -> dict[str, Any]:
    aliases: set[str] = set()
    events: list[dict[str, Any]] = []
    discovery: list[dict[str, Any]] = []
    robots: dict[str, dict[str, Any]] = {}
    candidates: list[tuple[int, str]] = []  # (common prefix length, url), best kept
    for event in out.records("crawl_log.jsonl"):
        event_url = str(event.get("url", ""))
        kind = event.get("event")
        if kind == "discovered":
            if event_url in names or _normalized(event_url) in names:
                aliases.add(event_url)
                discovery.append({"url": event_url, **(event.get("discovery") or {})})
            else:
                score = len(_common_prefix(event_url, target))
                if len(candidates) < nearest * 10:
                    heapq.heappush(candidates, (score, event_url))
                elif score > candidates[0][0]:
                    heapq.heappushpop(candidates, (score, event_url))
        _note_robots(robots, event)
        if (event_url in aliases or event_url in names
                or any(event.get(name) in names for name in REF_FIELDS)
                or (kind == "skipped" and event.get("reason") == "duplicate_url"
                    and event.get("rule") in names)
                or names.intersection(event.get("redirect_chain") or ())):
            events.append(event)
    ranked = sorted((url for _, url in candidates),
                    key=lambda u: -difflib.SequenceMatcher(None, u, target).ratio())
    return {"aliases": aliases, "events": events, "discovery": discovery,
            "robots": robots, "nearest": ranked[:nearest]}


def _note_robots(robots: dict[str, dict[str, Any]], event: dict[str, Any]) -> None:
    """Collect, per origin, the robots.txt fetch status and the rules that refused URLs."""
    url = str(event.get("url", ""))
    if event.get("parser") == "robots" and event.get("event") == "fetched":
        robots.setdefault(origin_of(url), {"status": None, "rules": {}})["status"] = (
            event.get("status"))
    elif event.get("event") == "skipped" and event.get("reason") == "robots":
        entry = robots.setdefault(origin_of(url), {"status": None, "rules": {}})
        entry["rules"].setdefault(str(event.get("rule")), None)
    elif event.get("event") == "failed" and event.get("reason") == "robots_unreachable":
        robots.setdefault(origin_of(url), {"status": None, "rules": {}})["unreachable"] = (
            event.get("status"))


def _common_prefix(a: str, b: str) -> str:
    index = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        index += 1
    return a[:index]


def _scan_pages(out: OutputDir, names: set[str]
                ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    pages: list[dict[str, Any]] = []
    linkers: list[dict[str, Any]] = []
    for page in out.records("pages.jsonl"):
        urls = {page.get("canonical_url"), page.get("fetched_url"), page.get("final_url"),
                *(page.get("observed_urls") or ()), *(page.get("redirect_chain") or ())}
        if names.intersection(urls):
            pages.append({name: page.get(name) for name in (
                "id", "canonical_url", "fetched_url", "final_url", "observed_urls",
                "redirect_chain", "title", "main_heading", "content_hash", "discovery",
                "fetch_mode", "render_reason", "depth", "warnings")})
        if len(linkers) >= MAX_LINKERS:
            continue
        for link in page.get("links") or ():
            if strip_fragment(str(link.get("url", ""))) in names:
                linkers.append({"page": page.get("canonical_url"), "region": link.get("region"),
                                "text": link.get("text"), "url": link.get("url"),
                                "heading_path": link.get("heading_path")})
                if len(linkers) >= MAX_LINKERS:
                    break
    return pages, linkers


def _scan_chunks(out: OutputDir, page_ids: set[str]) -> tuple[list[str], int]:
    if not page_ids:
        return [], 0
    ids: list[str] = []
    count = 0
    for chunk in out.records("chunks.jsonl"):
        if chunk.get("page_id") in page_ids:
            count += 1
            if len(ids) < MAX_CHUNKS:
                ids.append(str(chunk.get("id")))
    return ids, count


def would_apply(out: OutputDir, url: str, robots: dict[str, dict[str, Any]]
                ) -> list[dict[str, Any]]:
    """The admission rules of the crawl, replayed on a URL it never discovered."""
    args = out.run.get("arguments") or {}
    site = str(args.get("site") or out.run.get("site"))
    rules: list[dict[str, Any]] = []
    try:
        scope = Scope(site, allow=_patterns(args.get("allow")), deny=_patterns(args.get("deny")))
        decision = scope.decide(url)
        rules.append({"check": "scope", "allowed": decision.allowed,
                      "reason": decision.reason,
                      "rule": decision.rule or f"scope: {scope.prefix}"})
    except (ValueError, re.error) as exc:
        rules.append({"check": "scope", "allowed": None, "reason": None,
                      "rule": f"cannot rebuild scope from run.json ({exc})"})
    host = urlsplit(url).hostname or ""
    if host and (re.fullmatch(r"[\d.]+|\[?[0-9a-fA-F:]+\]?", host) or "localhost" in host):
        blocked = AddressGuard(urlsplit(site).hostname or "", resolve=lambda _h: []).check(host)
        rules.append({"check": "private_address", "allowed": blocked is None,
                      "reason": "private_address" if blocked else None, "rule": blocked})
    ext = extension_of(url)
    rules.append({"check": "non_html", "allowed": ext not in NON_HTML_EXTENSIONS,
                  "reason": "non_html" if ext in NON_HTML_EXTENSIONS else None,
                  "rule": f"file extension {ext}" if ext in NON_HTML_EXTENSIONS else None})
    if args.get("max_depth"):
        rules.append({"check": "max_depth", "allowed": None, "reason": None,
                      "rule": f"max_depth={args['max_depth']}: applies by link distance from "
                              "the seed, unknown for an undiscovered URL"})
    rules.append(_robots_rule(url, robots))
    return rules


def _robots_rule(url: str, robots: dict[str, dict[str, Any]]) -> dict[str, Any]:
    entry = robots.get(origin_of(url))
    if entry is None:
        return {"check": "robots", "allowed": None, "reason": None,
                "rule": "robots.txt of this origin was never fetched in this crawl"}
    if "unreachable" in entry:
        return {"check": "robots", "allowed": False, "reason": "robots",
                "rule": f"robots.txt unreachable (HTTP {entry['unreachable']}): disallow all"}
    lines = [rule for rule in entry["rules"] if rule.lower().startswith(("disallow:", "allow:"))]
    policy = RobotsPolicy.from_response(200, ("User-agent: *\n" + "\n".join(lines)).encode())
    decision = policy.decide(url)
    note = (f"checked against the {len(lines)} robots.txt rule(s) that refused URLs in this "
            "crawl (the log does not keep the whole file)")
    return {"check": "robots", "allowed": decision.allowed,
            "reason": None if decision.allowed else "robots",
            "rule": decision.rule or note, "note": note}


def _patterns(value: Any) -> list[re.Pattern[str]]:
    if not value:
        return []
    items = value if isinstance(value, list) else str(value).split(",")
    return [re.compile(item) for item in items if item]


def format_history(history: dict[str, Any]) -> str:
    """The history as text."""
    url = history["url"]
    lines = [url]
    if history["normalized"] and history["normalized"] != url:
        lines.append(f"  normalized: {history['normalized']}")
    if history["aliases"]:
        lines.append("  also seen as: " + ", ".join(history["aliases"]))
    if not history["discovered"] and not history["pages"]:
        lines.append(f"  never discovered in this crawl ({history['output']})")
        if history["events"]:
            lines.append("  but the log mentions it:")
            lines += [format_event(event) for event in history["events"]]
        if history["linked_from"]:
            lines.append("  yet these pages link to it:")
            lines += _linker_lines(history["linked_from"])
        lines.append("  rules that would apply:")
        for rule in history["rules"]:
            verdict = {True: "allowed", False: "REFUSED", None: "unknown"}[rule["allowed"]]
            reason = f" ({rule['reason']})" if rule.get("reason") else ""
            lines.append(f"    {rule['check']:<16} {verdict}{reason}  {rule.get('rule') or ''}")
            if rule.get("note") and rule.get("note") != rule.get("rule"):
                lines.append(f"      {rule['note']}")
        lines.append("  nearest discovered URLs:")
        lines += [f"    {near}" for near in history["nearest"]] or ["    (none)"]
        return "\n".join(lines)
    for item in history["discovery"]:
        region = DISCOVERY_REGION.get(str(item.get("reason")))
        where = f" in region {region}" if region else ""
        source = f" from {item['from']}" if item.get("from") else ""
        lines.append(f"  discovered as {item['url']} via {item.get('reason')}{where}{source}")
    lines.append("  events:")
    lines += [format_event(event) for event in history["events"]]
    outcome = history["outcome"]
    if outcome:
        lines.append(f"  outcome: {outcome['event']}"
                     + (f" ({outcome['reason']})" if outcome.get("reason") else "")
                     + (f" rule {outcome['rule']!r}" if outcome.get("rule") else "")
                     + (f" duplicate of {outcome['duplicate_of']}"
                        if outcome.get("duplicate_of") else ""))
    else:
        lines.append("  outcome: none logged (crawl still running or killed)")
    for other, event in history["outcomes"].items():
        if event is not outcome:
            lines.append(f"  outcome of {other}: {event['event']}"
                         + (f" ({event['reason']})" if event.get("reason") else ""))
    for page in history["pages"]:
        lines.append(f"  page {page['id']}")
        lines.append(f"    canonical {page['canonical_url']}  title {page['title']!r}")
        lines.append(f"    observed {', '.join(page['observed_urls'] or [])}")
        found = page.get("discovery") or []
        ways = ", ".join(f"{d.get('reason')}" + (f" from {d['from']}" if d.get("from") else "")
                         for d in found[:5])
        more = f" and {len(found) - 5} more ways" if len(found) > 5 else ""
        lines.append(f"    found by {ways}{more}")
        if page.get("warnings"):
            lines.append("    warnings " + ", ".join(w.get("code", "") for w in page["warnings"]))
    if history["pages"]:
        lines.append(f"  chunks: {history['chunk_count']}"
                     + (": " + ", ".join(history["chunk_ids"][:10]) if history["chunk_ids"]
                        else ""))
    if history["linked_from"]:
        lines.append(f"  linked from ({len(history['linked_from'])} shown):")
        lines += _linker_lines(history["linked_from"])
    return "\n".join(lines)


def _linker_lines(linkers: list[dict[str, Any]]) -> list[str]:
    return [f"    {item['page']}  [{item['region']}] {item['text']!r}" for item in linkers]
