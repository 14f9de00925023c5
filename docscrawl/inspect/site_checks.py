"""Gold-free checks of what a crawl learned about the site as a whole (`docscrawl check`).

What one page cannot show but the site does, read from pages.jsonl only:

7. template leak: share of pages whose Markdown holds a text line that appears on most
   pages (a template the main content swallowed) at an edge of the Markdown or next to
   another such line: template comes in runs, while a lone repeated line between the
   page's own lines is content (Node.js's "Stability: 2 - Stable" under each page's
   title). A failure names the fix: a site profile whose `main` selector names the element
   holding the pages' own blocks (read from structure.jsonl);
8. heading-path roots: share of pages whose heading paths start at the site's most common
   first entry (a site title or a section label in place of the page's own title);
9. code languages: code blocks whose markup names a language (`code_language_unread`
   warnings) against all code blocks, counted by the markup that names it
   (`language-rust` 443) so that one wrapper shape shows as one line;
10. version coverage: pages without a version on a site where most pages have one;
11. cross-version merges: pages whose merged URLs name two versions;
12. template version: pages without a version on a site whose template states one: a
    version number in the `<title>` of most pages (pages.jsonl), or in a place of the
    template the crawl saw on most pages (`site_model.json`'s version signals: a home
    link's title, a version label...), whether or not the crawl made it evidence.
13. main heading: pages whose `main_heading` is not their own top heading (the first
    heading of the highest rank in `headings`) but another of their headings, or none:
    a heading chosen to agree with the title, or chrome above the page's title.

Each returns the same result dict as the six checks of `check` (`check._result`).
Memory: line counts are kept as 64-bit digests, pruned when they pass `MAX_LINES`.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from typing import Any

from docscrawl.extract.main_heading import top_heading
from docscrawl.extract.template.content import (
    common_path,
    content_root,
    locator_css,
    template_fix,
)
from docscrawl.extract.version_token import IN_TEXT_RE, url_version
from docscrawl.incremental.site_model import SITE_MODEL_FILE
from docscrawl.inspect.output import EXAMPLES, OutputDir

LINE_MIN_CHARS = 20  # shorter lines ("Parameters", "Returns") repeat legitimately
COMMON_SHARE = 0.5  # a line on this share of pages is template
MIN_PAGES = 20  # fewer pages: a repeated line proves nothing
MAX_LINES = 500_000  # line digests kept while counting
MAX_TITLE_NUMBERS = 10_000  # distinct numbers counted in page titles
TEMPLATE_SHARE = 0.8  # a version shown on this share of pages is the template's
CODE_LANGUAGE_WARNING = "code_language_unread"
MAX_MARKUP_KINDS = 1000  # distinct markups counted for the code-language check
_NAMED_MARKUP = re.compile(r"names a language \(([^)]*)\)")
_LINK_TARGET = re.compile(r"\]\([^)]*\)")


def _digest(text: str) -> int:
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8)
    return int.from_bytes(digest.digest(), "big")


def _row(raw: str) -> tuple[str, int | None]:
    """A Markdown line without link targets, and its digest when it is a prose line
    (no heading, table, fence or rule; 20+ characters)."""
    text = _LINK_TARGET.sub("]", raw).strip()
    if len(text) < LINE_MIN_CHARS or text.startswith(("#", "```", "|", "---")):
        return text, None
    return text, _digest(text)


def _lines(markdown: str | None) -> set[int]:
    """Digests of the Markdown's prose lines."""
    return {d for raw in (markdown or "").splitlines() if (d := _row(raw)[1]) is not None}


def _leaked(markdown: str | None, common: set[int]) -> set[int]:
    """The common lines of a page that read as template: at the first or last non-empty
    line, or next to another common line."""
    rows = [d if d in common else None for raw in (markdown or "").splitlines()
            if (row := _row(raw))[0] for d in [row[1]]]
    last = len(rows) - 1
    return {d for i, d in enumerate(rows) if d is not None and (
        i in (0, last) or (i > 0 and rows[i - 1] is not None)
        or (i < last and rows[i + 1] is not None))}


def _line_text(markdown: str | None, wanted: set[int]) -> str | None:
    for raw in (markdown or "").splitlines():
        text, digest = _row(raw)
        if digest in wanted:
            return text
    return None


MAX_FIX_PAGES = 200  # leaked pages whose blocks are read to name the content element


def _content_selector(out: OutputDir, leaked_pages: dict[str, set[int]]) -> str | None:
    """A CSS selector for the element holding the leaked pages' own blocks (those with
    text and no leaked line), when it is deeper than the main element chosen; else None."""
    if not out.has("structure.jsonl"):
        return None
    roots: list[str | None] = []
    main: str | None = None
    for record in out.records("structure.jsonl"):
        common = leaked_pages.get(str(record.get("canonical_url")))
        if common is None:
            continue
        own = [str(b.get("locator") or "") for b in record.get("blocks") or ()
               if isinstance(b, dict) and b.get("text_chars") and b.get("locator")
               and not _lines(str(b.get("markdown") or "")) & common]
        main = main or str(record.get("main_locator") or "")
        roots.append(common_path(own) if own else None)
    root = content_root(roots, main)
    return locator_css(root) if root else None


class SiteScan:
    """What checks 8-11 need, gathered page by page (fed by `check.run_checks`)."""

    def __init__(self) -> None:
        self.pages = 0
        self.roots: Counter[str] = Counter()
        self.root_examples: dict[str, list[str]] = {}
        self.code_blocks = 0
        self.code_unread = 0
        self.code_examples: list[dict[str, Any]] = []
        self.code_markup: Counter[str] = Counter()
        self.versioned = 0
        self.unversioned: list[str] = []
        self.versions: Counter[str] = Counter()
        self.cross_version: list[dict[str, Any]] = []
        self.cross_version_pages = 0
        self.title_numbers: Counter[str] = Counter()  # pages whose <title> names each number
        self.headed = 0  # pages with a heading
        self.off_top = 0  # ... whose main heading is another of them, or none
        self.not_a_heading = 0  # ... whose main heading is no heading (a title block)
        self.off_top_examples: list[dict[str, Any]] = []

    def add(self, page: dict[str, Any]) -> None:
        self.pages += 1
        url = str(page.get("canonical_url") or "")
        headings = page.get("headings") or []
        self._main_heading(page, url, headings)
        first = headings[0] if headings and isinstance(headings[0], dict) else None
        path = first.get("path") if first else None
        if path:
            root = str(path[0])
            self.roots[root] += 1
            examples = self.root_examples.setdefault(root, [])
            if len(examples) < EXAMPLES and len(self.root_examples) < 10_000:
                examples.append(url)
        self.code_blocks += len(page.get("code_blocks") or ())
        for warning in page.get("warnings") or ():
            if isinstance(warning, dict) and warning.get("code") == CODE_LANGUAGE_WARNING:
                self.code_unread += 1
                detail = str(warning.get("detail") or "")
                markup = _NAMED_MARKUP.search(detail)
                key = markup.group(1) if markup else "?"
                if key in self.code_markup or len(self.code_markup) < MAX_MARKUP_KINDS:
                    self.code_markup[key] += 1
                if len(self.code_examples) < EXAMPLES:
                    self.code_examples.append({"page": url, "detail": detail, "markup": key})
        version = page.get("version") or {}
        value = version.get("value") if isinstance(version, dict) else None
        if value:
            self.versioned += 1
            self.versions[str(value)] += 1
        elif len(self.unversioned) < 50_000:
            self.unversioned.append(url)
        title = page.get("title")
        if isinstance(title, str) and len(self.title_numbers) < MAX_TITLE_NUMBERS:
            self.title_numbers.update({m.group(1) for m in IN_TEXT_RE.finditer(title)})
        urls = [url, *(str(u) for u in page.get("observed_urls") or ())]
        named = {v for v in (url_version(u) for u in urls) if v}
        if len(named) > 1:
            self.cross_version_pages += 1
            if len(self.cross_version) < EXAMPLES:
                self.cross_version.append({"page": url, "versions": sorted(named),
                                           "urls": urls[:4]})


    def _main_heading(self, page: dict[str, Any], url: str, headings: list[Any]) -> None:
        """Count the page against its own top heading (check 12)."""
        records = [h for h in headings if isinstance(h, dict) and h.get("text")]
        top = top_heading(records, _level, lambda h: str(h["text"]))
        if top is None:
            return
        self.headed += 1
        main = page.get("main_heading")
        if main == top:
            return
        if main and main not in {str(h["text"]) for h in records}:
            self.not_a_heading += 1  # Haddock's caption, Doxygen's title div
            return
        self.off_top += 1
        if len(self.off_top_examples) < EXAMPLES:
            self.off_top_examples.append({"page": url, "main_heading": main,
                                          "top_heading": top, "title": page.get("title")})


def _level(heading: dict[str, Any]) -> int:
    level = heading.get("level")
    return level if isinstance(level, int) else 7


def template_leak(out: OutputDir, max_share: float, result: Any) -> dict[str, Any]:
    """Pages whose Markdown holds a run of lines repeated on most pages (two passes; a
    third over structure.jsonl names the fix when the check fails)."""
    counts: Counter[int] = Counter()
    pages = 0
    for page in out.records("pages.jsonl"):
        pages += 1
        counts.update(_lines(page.get("markdown")))
        if len(counts) > MAX_LINES:  # a template line is on most pages: it survives
            floor = max(2, pages // 10)
            counts = Counter({k: v for k, v in counts.items() if v >= floor})
    common = {k for k, v in counts.items() if pages and v >= COMMON_SHARE * pages}
    leaked = 0
    examples: list[dict[str, Any]] = []
    leaked_pages: dict[str, set[int]] = {}
    if common and pages >= MIN_PAGES:
        for page in out.records("pages.jsonl"):
            hit = _leaked(page.get("markdown"), common)
            if hit:
                leaked += 1
                if len(leaked_pages) < MAX_FIX_PAGES:
                    leaked_pages[str(page.get("canonical_url"))] = hit
                if len(examples) < EXAMPLES:
                    examples.append({"page": page.get("canonical_url"),
                                     "line": (_line_text(page.get("markdown"), hit) or "")[:100],
                                     "on_pages": max(counts[h] for h in hit)})
    value = leaked / pages if pages >= MIN_PAGES else None
    details: dict[str, Any] = {"pages": pages, "leaked": leaked, "common_lines": len(common)}
    figure = (f"{leaked}/{pages} pages hold a run of text lines that appears on half the "
              f"pages or more ({len(common)} such lines; sites of {MIN_PAGES}+ pages)")
    if value is not None and value > max_share:
        selector = _content_selector(out, leaked_pages)
        details["fix"] = ("the main content holds the site's template: "
                          + template_fix(selector))
        details["main_selector"] = selector
        figure += "; fix: " + details["fix"]
    return result("template_leak", "Template leak", value, max_share, higher_is_better=False,
                  figure=figure, details=details, examples=examples)


def heading_roots(scan: SiteScan, max_share: float, result: Any) -> dict[str, Any]:
    """The share of pages whose heading paths start at the most common root."""
    root, count = scan.roots.most_common(1)[0] if scan.roots else ("", 0)
    value = count / scan.pages if scan.pages >= MIN_PAGES else None
    examples = [{"root": r, "pages": n, "example_page": (scan.root_examples.get(r) or [""])[0]}
                for r, n in scan.roots.most_common(3)]
    return result("heading_roots", "Heading-path roots", value, max_share,
                  higher_is_better=False,
                  figure=f"{count}/{scan.pages} pages have heading paths starting at "
                         f"{root[:60]!r}; {len(scan.roots)} distinct roots",
                  details={"root": root, "pages": count, "distinct_roots": len(scan.roots)},
                  examples=examples if value is not None and value > max_share else [])


def code_languages(scan: SiteScan, max_share: float, result: Any) -> dict[str, Any]:
    """Code blocks whose markup names a language the record lacks."""
    value = scan.code_unread / scan.code_blocks if scan.code_blocks else None
    top = ", ".join(f"{markup} {n}" for markup, n in scan.code_markup.most_common(3))
    return result("code_languages", "Code languages", value, max_share,
                  higher_is_better=False,
                  figure=f"{scan.code_unread}/{scan.code_blocks} code blocks lack the "
                         f"language their markup names" + (f" ({top})" if top else ""),
                  details={"unread": scan.code_unread, "code_blocks": scan.code_blocks,
                           "by_markup": dict(scan.code_markup.most_common(20))},
                  examples=scan.code_examples)


def version_coverage(scan: SiteScan, max_share: float, min_versioned: float,
                     result: Any) -> dict[str, Any]:
    """Pages without a version, judged only on a site where most pages have one."""
    missing = scan.pages - scan.versioned
    mostly = scan.pages and scan.versioned >= min_versioned * scan.pages
    value = missing / scan.pages if mostly else None
    versions = ", ".join(f"{v} {n}" for v, n in scan.versions.most_common(5)) or "none"
    return result("version_coverage", "Version coverage", value, max_share,
                  higher_is_better=False,
                  figure=f"{missing}/{scan.pages} pages have no version; versioned pages: "
                         f"{scan.versioned} ({versions})"
                         + ("" if mostly else " (most pages have none: not judged)"),
                  details={"versioned": scan.versioned, "unversioned": missing,
                           "versions": dict(scan.versions.most_common(20))},
                  examples=[{"page": url} for url in scan.unversioned[:EXAMPLES]]
                  if mostly else [])


def cross_version_merges(scan: SiteScan, max_merges: int, result: Any) -> dict[str, Any]:
    """Pages whose merged URLs name different versions (one answer lost per merge)."""
    return result("cross_version_merges", "Cross-version merges",
                  float(scan.cross_version_pages), max_merges, higher_is_better=False,
                  figure=f"{scan.cross_version_pages} pages merge URLs of different versions",
                  details={"pages": scan.cross_version_pages}, examples=scan.cross_version)


def template_versions(out: OutputDir, scan: SiteScan) -> list[dict[str, Any]]:
    """Version numbers the site's template states: in the titles of most pages, and the
    crawl's version signals seen on most of the pages it read (`site_model.json`)."""
    found = [{"value": v, "where": "page title", "pages": n, "of": scan.pages}
             for v, n in scan.title_numbers.most_common(5)
             if scan.pages >= MIN_VERSION_PAGES and n >= TEMPLATE_SHARE * scan.pages]
    try:
        model = json.loads((out.path / SITE_MODEL_FILE).read_text(encoding="utf-8"))
        versions = model.get("versions") or {}
        seen = int(versions.get("pages") or 0)
        rows = [(str(r[1]), str(r[3]) if len(r) > 3 else "", int(r[2]))
                for r in versions.get("counts") or () if isinstance(r, list) and len(r) >= 3]
    except (OSError, ValueError, TypeError, AttributeError):
        return found
    known = {(f["value"], f["where"]) for f in found}
    found += [{"value": v, "where": w or "site chrome", "pages": n, "of": seen}
              for v, w, n in sorted(rows, key=lambda r: -r[2])
              if seen >= MIN_VERSION_PAGES and n >= TEMPLATE_SHARE * seen
              and (v, w or "site chrome") not in known]
    return found[:10]


MIN_VERSION_PAGES = 3  # pages read before a number shown on most of them says anything


def template_version(out: OutputDir, scan: SiteScan, max_share: float,
                     result: Any) -> dict[str, Any]:
    """Pages without a version on a site whose template states one."""
    stated = template_versions(out, scan)
    missing = scan.pages - scan.versioned
    value = missing / scan.pages if stated and scan.pages else None
    named = "; ".join(f"{s['value']} ({s['where']}, {s['pages']}/{s['of']} pages)"
                      for s in stated[:3]) or "no version"
    return result("template_version", "Template version", value, max_share,
                  higher_is_better=False,
                  figure=f"{missing}/{scan.pages} pages have no version; the template "
                         f"states {named}",
                  details={"unversioned": missing, "stated": stated},
                  examples=[{"page": url, "stated": stated[0]["value"]}
                            for url in scan.unversioned[:EXAMPLES]] if stated else [])


def main_heading_top(scan: SiteScan, max_share: float, result: Any) -> dict[str, Any]:
    """Pages whose main heading is another of their headings than the first of the highest
    rank, or missing: the page's own top heading was passed over."""
    value = scan.off_top / scan.headed if scan.headed else None
    return result("main_heading", "Main heading", value, max_share, higher_is_better=False,
                  figure=f"{scan.off_top}/{scan.headed} pages with headings have a main heading "
                         f"that is another of their headings, or none, not their first "
                         f"top-level heading; {scan.not_a_heading} are named by a block that "
                         f"is no heading (a title caption or div)",
                  details={"pages_with_headings": scan.headed, "off_top": scan.off_top,
                           "not_a_heading": scan.not_a_heading},
                  examples=scan.off_top_examples)
