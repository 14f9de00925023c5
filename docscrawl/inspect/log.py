"""`docscrawl log OUT`: what the crawl log says, aggregated, optionally filtered.

`analyze_log` streams crawl_log.jsonl once and returns a JSON-ready dict: counts by event,
skip reasons with the rules that decided them and example URLs, failures by reason,
rendered pages and why, the slowest fetches, and (with a filter) the matching events.
`format_log` turns that dict into the text the person on call reads.
"""

from __future__ import annotations

import heapq
from collections import Counter
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any

from docscrawl.inspect.output import OutputDir

__all__ = ["LogFilter", "analyze_log", "format_log"]

MAX_RULES_PER_REASON = 1000  # distinct rules kept per skip reason; the rest are lumped
OTHER_RULES = "(other rules)"


@dataclass(frozen=True)
class LogFilter:
    """Which events to look at. `url` is a glob (`*`, `?`, `[`) or else a substring."""

    reason: str | None = None
    event: str | None = None
    url: str | None = None

    @property
    def active(self) -> bool:
        """True when any filter is set."""
        return any((self.reason, self.event, self.url))

    def matches(self, event: dict[str, Any]) -> bool:
        """True when the event passes every filter that is set."""
        if self.event and event.get("event") != self.event:
            return False
        if self.reason and event.get("reason") != self.reason:
            return False
        return not self.url or url_matches(self.url, str(event.get("url", "")))


def url_matches(pattern: str, url: str) -> bool:
    """Glob match on the whole URL when `pattern` has glob characters, else substring."""
    if any(char in pattern for char in "*?["):
        return fnmatchcase(url, pattern)
    return pattern in url


class _Reasons:
    """Counts, rules and example URLs per reason of one event kind."""

    def __init__(self, examples: int) -> None:
        self.examples = examples
        self.counts: Counter[str] = Counter()
        self.rules: dict[str, dict[str, list[Any]]] = {}
        self.statuses: dict[str, Counter[str]] = {}

    def add(self, event: dict[str, Any]) -> None:
        reason = event.get("reason") or "(no reason)"
        self.counts[reason] += 1
        rules = self.rules.setdefault(reason, {})
        rule = event.get("rule") or "(no rule)"
        if rule not in rules and len(rules) >= MAX_RULES_PER_REASON:
            rule = OTHER_RULES
        entry = rules.setdefault(rule, [0, []])
        entry[0] += 1
        if len(entry[1]) < self.examples:
            entry[1].append(event.get("url"))
        if event.get("status") is not None:
            self.statuses.setdefault(reason, Counter())[str(event["status"])] += 1

    def as_list(self, top_rules: int) -> list[dict[str, Any]]:
        result = []
        for reason, count in self.counts.most_common():
            rules = sorted(self.rules[reason].items(), key=lambda item: -item[1][0])
            result.append({
                "reason": reason,
                "count": count,
                "distinct_rules": len(rules),
                "rules": [{"rule": rule, "count": n, "examples": examples}
                          for rule, (n, examples) in rules[:top_rules]],
                "statuses": dict(self.statuses.get(reason, Counter()).most_common()),
            })
        return result


def analyze_log(
    out: OutputDir, flt: LogFilter | None = None, *, examples: int = 3, top: int = 10,
    limit: int = 50,
) -> dict[str, Any]:
    """Aggregate crawl_log.jsonl (the events passing `flt`) into a JSON-ready dict.

    `limit` caps the matching events listed when a filter is set (0: all of them).
    """
    out.require("crawl_log.jsonl")
    flt = flt or LogFilter()
    events: Counter[str] = Counter()
    skips, failures = _Reasons(examples), _Reasons(examples)
    outcome_reasons: dict[str, Counter[str]] = {"duplicate": Counter(), "unchanged": Counter()}
    rendered: list[dict[str, Any]] = []
    rendered_count = 0
    slowest: list[tuple[float, int, dict[str, Any]]] = []
    matches: list[dict[str, Any]] = []
    total = urls = 0
    for index, event in enumerate(out.records("crawl_log.jsonl")):
        if not flt.matches(event):
            continue
        total += 1
        kind = str(event.get("event"))
        events[kind] += 1
        if kind == "discovered":
            urls += 1
        elif kind == "skipped":
            skips.add(event)
        elif kind == "failed":
            failures.add(event)
        elif kind in outcome_reasons:
            outcome_reasons[kind][str(event.get("reason") or "(no reason)")] += 1
        elif kind == "rendered":
            rendered_count += 1
            if len(rendered) < top * 5:
                rendered.append(_brief(event, "reason", "rule", "elapsed_ms", "status"))
        if kind == "fetched" and isinstance(event.get("elapsed_ms"), int | float):
            item = (float(event["elapsed_ms"]), -index,
                    _brief(event, "event", "elapsed_ms", "status", "fetch_mode", "parser"))
            if len(slowest) < top:
                heapq.heappush(slowest, item)
            else:
                heapq.heappushpop(slowest, item)
        if flt.active and (not limit or len(matches) < limit):
            matches.append(event)
    if not rendered_count and not flt.event and not flt.reason:
        rendered, rendered_count = _browser_pages(out, flt, top * 5)
    result: dict[str, Any] = {
        "output": str(out.path),
        "site": out.run.get("site"),
        "status": out.run.get("status"),
        "finish_reason": out.run.get("finish_reason"),
        "complete": out.run.get("complete"),
        "filters": {"event": flt.event, "reason": flt.reason, "url": flt.url},
        "events_total": total,
        "urls_discovered": urls,
        "events": dict(events.most_common()),
        "skips": skips.as_list(top_rules=5),
        "failures": failures.as_list(top_rules=5),
        "duplicate_reasons": dict(outcome_reasons["duplicate"].most_common()),
        "unchanged_reasons": dict(outcome_reasons["unchanged"].most_common()),
        "rendered_total": rendered_count,
        "rendered": rendered,
        "slowest": [item for _, _, item in sorted(slowest, reverse=True)],
    }
    if flt.active:
        result["matches_total"] = total
        result["matches"] = matches
    return result


def _browser_pages(out: OutputDir, flt: LogFilter, keep: int) -> tuple[list[dict[str, Any]], int]:
    """Pages fetched with the browser, from pages.jsonl (when the log has no `rendered`)."""
    found: list[dict[str, Any]] = []
    count = 0
    for page in out.records("pages.jsonl"):
        if page.get("fetch_mode") != "browser":
            continue
        url = page.get("final_url") or page.get("canonical_url") or ""
        if flt.url and not url_matches(flt.url, url):
            continue
        count += 1
        if len(found) < keep:
            found.append({"url": url, "reason": page.get("render_reason"),
                          "rule": None, "elapsed_ms": None, "status": None})
    return found, count


def _brief(event: dict[str, Any], *fields: str) -> dict[str, Any]:
    return {"url": event.get("url"), **{name: event.get(name) for name in fields}}


def format_log(summary: dict[str, Any], *, show_matches: bool = True) -> str:
    """The summary as text."""
    lines = [f"crawl log of {summary['output']}  ({summary['site']})",
             f"  run: {summary['status']} ({summary['finish_reason']}), "
             f"complete={summary['complete']}"]
    filters = {k: v for k, v in summary["filters"].items() if v}
    if filters:
        lines.append("  filter: " + ", ".join(f"{k}={v}" for k, v in filters.items()))
    lines.append(f"  {summary['events_total']} events, "
                 f"{summary['urls_discovered']} URLs discovered")
    lines.append("")
    lines.append("events")
    lines += [f"  {name:<12} {count:>8}" for name, count in summary["events"].items()]
    for title, key in (("skip reasons", "skips"), ("failures", "failures")):
        if not summary[key]:
            continue
        lines += ["", title]
        for entry in summary[key]:
            statuses = entry["statuses"]
            status_text = ("  statuses " + ", ".join(f"{s}×{n}" for s, n in statuses.items())
                           if statuses else "")
            lines.append(f"  {entry['reason']:<20} {entry['count']:>8}{status_text}")
            for rule in entry["rules"]:
                if rule["rule"] != "(no rule)":
                    lines.append(f"    rule {rule['rule']}  ({rule['count']})")
                lines += [f"      e.g. {url}" for url in rule["examples"]]
            hidden = entry["distinct_rules"] - len(entry["rules"])
            if hidden > 0:
                lines.append(f"    ... and {hidden} more rules")
    for kind in ("duplicate", "unchanged"):
        reasons = summary.get(f"{kind}_reasons") or {}
        if reasons:
            lines += ["", f"{kind} by reason: "
                      + ", ".join(f"{reason} {count}" for reason, count in reasons.items())]
    lines += ["", f"rendered pages: {summary['rendered_total']}"]
    for item in summary["rendered"][:10]:
        lines.append(f"  {item['url']}  why: {item.get('reason') or 'unknown'}")
    if summary["slowest"]:
        lines += ["", "slowest fetches"]
        for item in summary["slowest"]:
            what = item.get("parser") or item.get("fetch_mode") or item.get("event")
            lines.append(f"  {item['elapsed_ms']:>9.1f} ms  {item.get('status')}  "
                         f"{what:<8} {item['url']}")
    if show_matches and "matches" in summary:
        lines += ["", f"matching events: {summary['matches_total']}"
                  + (f" (first {len(summary['matches'])} shown)"
                     if len(summary["matches"]) < summary["matches_total"] else "")]
        lines += [format_event(event) for event in summary["matches"]]
    return "\n".join(lines)


def format_event(event: dict[str, Any]) -> str:
    """One crawl-log event on one line."""
    parts = [str(event.get("ts", "")), f"{event.get('event', ''):<10}", str(event.get("url"))]
    if event.get("reason"):
        parts.append(f"reason={event['reason']}")
    if event.get("rule"):
        parts.append(f"rule={event['rule']!r}")
    if event.get("status") is not None:
        parts.append(f"status={event['status']}")
    discovery = event.get("discovery")
    if isinstance(discovery, dict):
        parts.append(f"via={discovery.get('reason')}"
                     + (f" from {discovery['from']}" if discovery.get("from") else ""))
    for name in ("duplicate_of", "redirect_to", "canonical_url", "page_id"):
        if event.get(name):
            parts.append(f"{name}={event[name]}")
    if event.get("elapsed_ms") is not None:
        parts.append(f"{event['elapsed_ms']} ms")
    return "  " + "  ".join(parts)
