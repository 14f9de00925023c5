"""Invariants of the crawl log that `docscrawl check` verifies on every output.

`duplicate_targets`: a `duplicate` (of a redirect or of the same content) names, in
`duplicate_of`, a URL that has a page: a page record's canonical, first, fetched or
observed URL, or an `extracted`/`unchanged` event (`fetched` in an inventory crawl),
directly or through other duplicates. A duplicate of nothing sends `docscrawl why` in a
circle and loses the URL's story.
"""

from __future__ import annotations

from typing import Any

from docscrawl.inspect.output import EXAMPLES, OutputDir
from docscrawl.vocab import WRITTEN

__all__ = ["duplicate_targets"]


def duplicate_targets(out: OutputDir) -> dict[str, Any]:
    """The check result (as `docscrawl.inspect.check` builds them) of the invariant."""
    pages: set[str] = set()
    for page in out.records("pages.jsonl"):
        pages.update(url for url in (page.get("canonical_url"), page.get("url"),
                                     page.get("fetched_url")) if url)
        pages.update(page.get("observed_urls") or ())
    inventory = out.run.get("arguments", {}).get("extract") in (False, "false", "off")
    duplicate_of: dict[str, str | None] = {}
    if out.has("crawl_log.jsonl"):
        for event in out.records("crawl_log.jsonl"):
            kind = event.get("event")
            if kind in WRITTEN or (inventory and kind == "fetched"):
                pages.add(event["url"])
                if event.get("canonical_url"):
                    pages.add(event["canonical_url"])
            elif kind == "duplicate":
                duplicate_of[event["url"]] = event.get("duplicate_of")
    offenders = [{"url": url, "duplicate_of": target}
                 for url, target in duplicate_of.items()
                 if not _reaches_page(target, pages, duplicate_of)]
    total = len(duplicate_of)
    share = len(offenders) / total if total else None
    figure = (f"{total - len(offenders)} of {total} duplicates point at a page"
              if total else "no duplicates")
    passed = not offenders
    return {"name": "duplicate_targets", "title": "duplicates point at pages",
            "passed": passed, "value": share, "threshold": 0.0, "comparison": "<=",
            "figure": figure + ("" if total else " (nothing to check: passes)"),
            "details": {"duplicates": total, "without_page": len(offenders)},
            "examples": offenders[:EXAMPLES]}


def _reaches_page(target: str | None, pages: set[str],
                  duplicate_of: dict[str, str | None]) -> bool:
    seen: set[str] = set()
    while target is not None and target not in pages:
        if target in seen:
            return False
        seen.add(target)
        target = duplicate_of.get(target)
    return target is not None
