"""`docscrawl report OUT -o report.html`: one self-contained HTML file.

No CDN, no external file: charts are inline SVG drawn here (outcomes, skip reasons,
status codes, discovery depth, fetch times) and the checks are a table. A few lines
of inline script measure every chart once the browser has laid it out and write the
result into `data-rendered` attributes, which is how the test (headless Chromium) tells
that the charts really render.

`collect_report` streams crawl_log.jsonl once; depth is the link distance from the seed,
rebuilt from each `discovered` event's `from` (sitemap and llms.txt entries are depth 1).
"""

from __future__ import annotations

import html
import json
from collections import Counter
from typing import Any

from docscrawl.inspect.check import Thresholds, run_checks
from docscrawl.inspect.output import OutputDir, OutputError
from docscrawl.vocab import TERMINAL_ORDER

__all__ = ["collect_report", "render_report"]

TIME_BUCKETS = ((10, "< 10 ms"), (50, "10–50 ms"), (100, "50–100 ms"), (250, "100–250 ms"),
                (500, "250–500 ms"), (1000, "0.5–1 s"), (2000, "1–2 s"), (5000, "2–5 s"),
                (float("inf"), "≥ 5 s"))
COLORS = {"outcomes": "#2b7bb9", "skips": "#d98c1f", "failures": "#7f7f7f",
          "statuses": "#6a51a3", "depth": "#2ca25f", "times": "#c0392b"}


def collect_report(out: OutputDir, thresholds: Thresholds | None = None) -> dict[str, Any]:
    """The figures the report shows, JSON-ready."""
    out.require("crawl_log.jsonl")
    outcomes: Counter[str] = Counter()
    skips: Counter[str] = Counter()
    failures: Counter[str] = Counter()
    statuses: Counter[str] = Counter()
    times: Counter[str] = Counter()
    depth_of: dict[str, int] = {}
    depths: Counter[int] = Counter()
    rules: dict[tuple[str, str], list[Any]] = {}  # (reason, rule) -> [count, example URL]
    fetches = 0
    for event in out.records("crawl_log.jsonl"):
        kind = event.get("event")
        if kind in TERMINAL_ORDER:
            outcomes[str(kind)] += 1
            if kind == "skipped":
                skips[str(event.get("reason"))] += 1
                key = (str(event.get("reason")), str(event.get("rule")))
                if key in rules or len(rules) < 500:
                    rules.setdefault(key, [0, event.get("url")])[0] += 1
            elif kind == "failed":
                failures[str(event.get("reason"))] += 1
        elif kind == "discovered":
            depth = _depth(event, depth_of)
            depth_of[str(event.get("url"))] = depth
            depths[depth] += 1
        elif kind == "fetched":
            fetches += 1
            statuses[str(event.get("status") or "none")] += 1
            elapsed = event.get("elapsed_ms")
            if isinstance(elapsed, int | float):
                times[next(label for limit, label in TIME_BUCKETS if elapsed < limit)] += 1
    try:
        checks: dict[str, Any] | None = run_checks(out, thresholds)
    except OutputError as exc:
        checks = {"error": str(exc)}
    return {
        "output": str(out.path), "site": out.run.get("site"), "run": _run_brief(out.run),
        "fetches": fetches,
        "outcomes": [(k, outcomes.get(k, 0)) for k in TERMINAL_ORDER],
        "skips": skips.most_common(),
        "failures": failures.most_common(),
        "skip_rules": [{"reason": reason, "rule": rule, "count": count, "example": example}
                       for (reason, rule), (count, example)
                       in sorted(rules.items(), key=lambda item: -item[1][0])[:25]],
        "statuses": sorted(statuses.items()),
        "depth": [(str(d), n) for d, n in sorted(depths.items())],
        "times": [(label, times.get(label, 0)) for _, label in TIME_BUCKETS],
        "checks": checks,
    }


def _depth(event: dict[str, Any], depth_of: dict[str, int]) -> int:
    discovery = event.get("discovery") or {}
    if discovery.get("reason") == "seed":
        return 0
    parent = depth_of.get(str(discovery.get("from")))
    return parent + 1 if parent is not None else 1


def _run_brief(run: dict[str, Any]) -> dict[str, Any]:
    return {name: run.get(name) for name in (
        "status", "finish_reason", "complete", "started_at", "finished_at", "elapsed_s",
        "pages_written", "chunks_written", "docscrawl_version")}


def bar_chart(key: str, title: str, items: list[tuple[str, int]], *, unit: str = "") -> str:
    """A horizontal bar chart as inline SVG."""
    color = COLORS.get(key, "#555")
    if not items:
        return (f'<figure class="chart" data-chart="{key}"><figcaption>{html.escape(title)}'
                '</figcaption><p class="empty">nothing to show</p></figure>')
    label_w, bar_w, row_h, pad = 170, 380, 22, 6
    width = label_w + bar_w + 70
    height = pad * 2 + row_h * len(items)
    top = max(value for _, value in items) or 1
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" role="img" aria-label="{html.escape(title)}">']
    for row, (label, value) in enumerate(items):
        y = pad + row * row_h
        length = round(bar_w * value / top, 1)
        parts.append(f'<text x="{label_w - 8}" y="{y + 15}" text-anchor="end" '
                     f'class="label">{html.escape(str(label))}</text>')
        parts.append(f'<rect class="bar" x="{label_w}" y="{y + 3}" width="{length}" '
                     f'height="{row_h - 6}" fill="{color}" data-value="{value}">'
                     f'<title>{html.escape(str(label))}: {value}{unit}</title></rect>')
        parts.append(f'<text x="{label_w + length + 6}" y="{y + 15}" class="value">'
                     f'{value}{unit}</text>')
    parts.append("</svg>")
    return (f'<figure class="chart" data-chart="{key}"><figcaption>{html.escape(title)}'
            f'</figcaption>{"".join(parts)}</figure>')


def _rules_table(rules: list[dict[str, Any]]) -> str:
    if not rules:
        return "<p>no URL was skipped</p>"
    rows = "".join(
        f"<tr><td>{html.escape(r['reason'])}</td><td><code>{html.escape(r['rule'])}</code></td>"
        f"<td>{r['count']}</td><td>{html.escape(str(r['example']))}</td></tr>" for r in rules)
    return ('<table class="rules"><thead><tr><th>reason</th><th>rule</th><th>URLs</th>'
            f"<th>example</th></tr></thead><tbody>{rows}</tbody></table>")


def _checks_table(checks: dict[str, Any] | None) -> str:
    if not checks:
        return ""
    if "error" in checks:
        return f'<p class="fail">checks not run: {html.escape(checks["error"])}</p>'
    rows = []
    for check in checks["checks"]:
        mark = "PASS" if check["passed"] else "FAIL"
        examples = "".join(
            "<li>" + html.escape(", ".join(f"{k}={v}" for k, v in example.items()
                                           if v not in (None, "", []))) + "</li>"
            for example in check["examples"])
        value = "n/a" if check["value"] is None else f"{check['value']:.1%}"
        rows.append(
            f'<tr class="{mark.lower()}" data-check="{check["name"]}"><td>{mark}</td>'
            f'<td>{html.escape(check["title"])}</td><td>{value}</td>'
            f'<td>{check["comparison"]} {check["threshold"]}</td>'
            f'<td>{html.escape(check["figure"])}<ul>{examples}</ul></td></tr>')
    verdict = "all checks passed" if checks["passed"] else "some checks FAILED"
    return (f'<p class="{"pass" if checks["passed"] else "fail"}">{verdict}</p>'
            '<table class="checks"><thead><tr><th></th><th>check</th><th>value</th>'
            '<th>threshold</th><th>figures and offending examples</th></tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table>')


_STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1100px}
h1{font-size:20px}h2{font-size:16px;margin-top:28px}
.charts{display:flex;flex-wrap:wrap;gap:18px}
figure.chart{margin:0;padding:10px;border:1px solid #ddd;border-radius:6px}
figcaption{font-weight:600;margin-bottom:6px}
svg text{font-size:12px;fill:#333}
table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:4px 8px;vertical-align:top}
tr.fail td:first-child,p.fail{color:#b00;font-weight:600}
tr.pass td:first-child,p.pass{color:#070;font-weight:600}
dl{display:grid;grid-template-columns:max-content auto;gap:2px 12px}dt{color:#666}
"""

# Measures each chart after layout and records it, so a headless browser can prove
# the SVG was drawn (width/height > 0 and bars present).
_SCRIPT = """
window.addEventListener('load', function () {
  var ok = 0;
  document.querySelectorAll('figure.chart svg').forEach(function (svg) {
    var box = svg.getBoundingClientRect();
    var bars = svg.querySelectorAll('rect.bar');
    var drawn = 0;
    bars.forEach(function (bar) { if (bar.getBBox().height > 0) { drawn++; } });
    svg.parentNode.setAttribute('data-rendered',
      Math.round(box.width) + 'x' + Math.round(box.height) + ':' + drawn + '/' + bars.length);
    if (box.width > 0 && box.height > 0 && drawn === bars.length) { ok++; }
  });
  document.body.setAttribute('data-charts-rendered', String(ok));
});
"""


def render_report(data: dict[str, Any]) -> str:
    """The report as one HTML document."""
    run = data["run"]
    facts = "".join(f"<dt>{html.escape(k)}</dt><dd>{html.escape(str(v))}</dd>"
                    for k, v in run.items())
    charts = [
        bar_chart("outcomes", "Outcome per discovered URL", data["outcomes"]),
        bar_chart("skips", "Skip reasons", data["skips"]),
        bar_chart("statuses", "HTTP status codes of fetches", data["statuses"]),
        bar_chart("depth", "Discovered URLs by depth (links from the seed)", data["depth"]),
        bar_chart("times", "Fetch times", data["times"]),
    ]
    if data["failures"]:
        charts.insert(2, bar_chart("failures", "Failure reasons", data["failures"]))
    title = f"docscrawl report: {data['site']}"
    embedded = json.dumps(data, default=str).replace("</", "<\\/")
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head><body>"
        f"<h1>{html.escape(title)}</h1><p>output: <code>{html.escape(data['output'])}</code>"
        f"</p><dl>{facts}</dl><h2>Crawl</h2><div class=\"charts\">{''.join(charts)}</div>"
        f"<h2>Skip rules</h2>{_rules_table(data['skip_rules'])}"
        f"<h2>Checks</h2>{_checks_table(data['checks'])}"
        f"<script type=\"application/json\" id=\"report-data\">"
        f"{embedded}</script>"
        f"<script>{_SCRIPT}</script></body></html>\n")
