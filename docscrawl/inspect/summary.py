"""A short human summary of a crawl output directory, from its run.json."""

from __future__ import annotations

import json
from pathlib import Path


def summarize(out_dir: Path) -> str:
    """Lines telling where the output is and what the crawl did."""
    run = json.loads((out_dir / "run.json").read_text(encoding="utf-8"))
    counts = run.get("counts", {})
    events = counts.get("events", {})
    lines = [
        f"docscrawl {run.get('docscrawl_version')}: {run.get('site')}",
        f"  output:   {out_dir.resolve()}",
        f"  status:   {run.get('status')} ({run.get('finish_reason')}), "
        f"complete={run.get('complete')}, {run.get('elapsed_s')} s",
        f"  pages:    {run.get('pages_written')} written, "
        f"{events.get('discovered', 0)} URLs discovered",
        "  events:   " + ", ".join(f"{k} {v}" for k, v in sorted(events.items())),
    ]
    changes = run.get("changes") or {}
    if changes:
        # removed only when a fetch said so, or no link leads there any more: say which
        why = ", ".join(f"{k} {v}" for k, v in sorted((run.get("removed_reasons") or {}).items()))
        lines.append("  changes:  " + ", ".join(
            f"{k} {v}" + (f" ({why})" if k == "removed" and why else "")
            for k, v in sorted(changes.items())))
    skips = counts.get("skip_reasons", {})
    if skips:
        lines.append("  skipped:  " + ", ".join(f"{k} {v}" for k, v in sorted(skips.items())))
    failures = counts.get("failure_reasons", {})
    if failures:
        lines.append("  failed:   " + ", ".join(f"{k} {v}" for k, v in sorted(failures.items())))
    browser = run.get("browser_unavailable")
    if browser:
        lines.append(f"  browser:  {browser['pages']} pages needed rendering and no browser "
                     f"was available: {browser['hint']}")
    for reason, example in sorted(run.get("skip_examples", {}).items()):
        lines.append(f"    e.g. {reason}: {example['url']}  [{example['rule']}]")
    return "\n".join(lines)
