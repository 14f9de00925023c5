"""`docscrawl check OUT`: the extraction checks of the navigation-context seed, the
chunk checks, a crawl-log invariant, and six site-wide checks (`docscrawl.inspect.site_checks`).

1. heading coverage: share of main-content chunks with a non-empty heading path
   (from chunks.jsonl; from structure.jsonl's blocks when no chunk was written);
2. breadcrumb coverage: pages by breadcrumb evidence (visible, jsonld, both, none);
3. link ambiguity: links with generic anchor text ("here", "read more"...) and neither
   a container label nor a heading path to recover what they point at;
4. template detection: navigation regions repeated across many pages (same links),
   and main content that repeats across pages (a template taken for content);
5. identity agreement: do title, main heading and canonical URL name the same page;
6. fragment resolution: does every table-of-contents or in-page `#fragment` target
   resolve to a heading anchor (or another element id of the main content) of the page
   it points to;
7. section precision and 8. plain headings: does every chunk cite the sections it holds,
   and are headings plain text (`docscrawl.inspect.check_chunks`);
9. duplicate targets: an invariant of the crawl log, every `duplicate` names a URL that
   has a page (`docscrawl.inspect.invariants`);
10-15. template leak, heading-path roots, code languages, version coverage, cross-version
   merges, template version, main heading: site-wide, gold-free (`docscrawl.inspect.site_checks`).

Each check returns its figure, the threshold it is held to, details and offending
examples. `run_checks` streams pages.jsonl and chunks.jsonl once (structure.jsonl only
for the heading fallback). Thresholds are fields of `Thresholds`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, fields
from typing import Any

from docscrawl.inspect.check_chunks import ChunkScan
from docscrawl.inspect.invariants import duplicate_targets
from docscrawl.inspect.output import EXAMPLES, OutputDir
from docscrawl.inspect.page_scan import PageScan, norm_url
from docscrawl.inspect.site_checks import (
    SiteScan,
    code_languages,
    cross_version_merges,
    heading_roots,
    main_heading_top,
    template_leak,
    template_version,
    version_coverage,
)

__all__ = ["CHECKS", "Thresholds", "format_checks", "parse_threshold", "run_checks"]

CHECKS = ("heading_coverage", "breadcrumb_coverage", "link_ambiguity", "template_detection",
          "identity_agreement", "fragment_resolution", "section_precision", "plain_headings",
          "duplicate_targets", "template_leak", "heading_roots", "code_languages",
          "version_coverage", "cross_version_merges", "template_version", "main_heading")
COUNTED = frozenset({"cross_version_merges"})  # checks whose value is a count, not a share
@dataclass
class Thresholds:
    """Pass/fail limits. `min_*` must be reached, `max_*` must not be exceeded."""

    min_heading_coverage: float = 0.8
    min_breadcrumb_coverage: float = 0.5
    max_link_ambiguity: float = 0.05
    max_template_main_share: float = 0.2
    template_min_pages: int = 3
    min_identity_agreement: float = 0.8
    min_fragment_resolution: float = 0.95
    max_unnamed_section_share: float = 0.01
    max_linked_heading_share: float = 0.0
    # Site-wide checks (docscrawl.inspect.site_checks)
    max_template_leak: float = 0.05
    max_heading_root_share: float = 0.5
    max_code_language_unread: float = 0.02
    max_unversioned_share: float = 0.05
    min_versioned_site: float = 0.5  # version coverage is judged when this share has one
    max_cross_version_merges: int = 0
    max_template_version_missing: float = 0.05
    max_main_heading_off_top: float = 0.02


def parse_threshold(thresholds: Thresholds, text: str) -> None:
    """Apply `name=value` to `thresholds`; raises ValueError with one line."""
    name, sep, value = text.partition("=")
    names = {field.name: field.type for field in fields(Thresholds)}
    name = name.strip().replace("-", "_")
    if not sep or name not in names:
        raise ValueError(f"bad threshold {text!r}; known: {', '.join(names)} (NAME=VALUE)")
    try:
        number: float = (int(value) if name in ("template_min_pages", "max_cross_version_merges")
                         else float(value))
    except ValueError:
        raise ValueError(f"threshold {name}: not a number: {value!r}") from None
    setattr(thresholds, name, number)


def _result(name: str, title: str, value: float | None, threshold: float, *, higher_is_better:
            bool, figure: str, details: dict[str, Any], examples: list[Any]) -> dict[str, Any]:
    if value is None:
        passed = True
        figure = f"{figure} (nothing to check: passes)"
    else:
        passed = value >= threshold if higher_is_better else value <= threshold
    return {"name": name, "title": title, "passed": passed, "value": value,
            "threshold": threshold, "comparison": ">=" if higher_is_better else "<=",
            "figure": figure, "details": details, "examples": examples[:EXAMPLES]}


def _share(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def run_checks(out: OutputDir, thresholds: Thresholds | None = None) -> dict[str, Any]:
    """Run the checks; returns {"passed": bool, "checks": [...], "thresholds": {...}}."""
    thresholds = thresholds or Thresholds()
    out.require("pages.jsonl")
    scan = PageScan()
    site = SiteScan()
    for page in out.records("pages.jsonl"):
        scan.add(page)
        site.add(page)
    chunk_scan = ChunkScan()
    checks = [
        heading_coverage(out, thresholds, chunk_scan),
        breadcrumb_coverage(scan, thresholds),
        link_ambiguity(scan, thresholds),
        template_detection(scan, thresholds),
        identity_agreement(scan, thresholds),
        fragment_resolution(scan, thresholds),
        section_precision(chunk_scan, thresholds),
        plain_headings(chunk_scan, thresholds),
        duplicate_targets(out),
        template_leak(out, thresholds.max_template_leak, _result),
        heading_roots(site, thresholds.max_heading_root_share, _result),
        code_languages(site, thresholds.max_code_language_unread, _result),
        version_coverage(site, thresholds.max_unversioned_share, thresholds.min_versioned_site,
                         _result),
        cross_version_merges(site, thresholds.max_cross_version_merges, _result),
        template_version(out, site, thresholds.max_template_version_missing, _result),
        main_heading_top(site, thresholds.max_main_heading_off_top, _result),
    ]
    return {"output": str(out.path), "site": out.run.get("site"), "pages": scan.pages,
            "passed": all(check["passed"] for check in checks), "checks": checks,
            "thresholds": asdict(thresholds)}


def heading_coverage(out: OutputDir, thresholds: Thresholds,
                     chunk_scan: ChunkScan | None = None) -> dict[str, Any]:
    """Share of main-content chunks (else content blocks) with a heading path; the chunks
    read on the way feed `chunk_scan` (checks 7 and 8)."""
    total = covered = 0
    examples: list[dict[str, Any]] = []
    basis = "chunks.jsonl"
    for chunk in out.records("chunks.jsonl"):
        if chunk_scan is not None:
            chunk_scan.add(chunk)
        meta = chunk.get("metadata") or {}
        if meta.get("region") not in (None, "main_content"):
            continue
        total += 1
        if meta.get("heading_path"):
            covered += 1
        elif len(examples) < EXAMPLES:
            examples.append({"chunk": chunk.get("id"), "url": meta.get("source_url"),
                             "text": str(chunk.get("markdown") or "")[:80]})
    if not total:
        # No chunks yet: a run of consecutive content blocks under one heading path stands
        # in for a chunk, so one long page without headings counts once, not per block.
        basis = "structure.jsonl sections (no chunks written)"
        for record in out.records("structure.jsonl"):
            previous: Any = None
            for block in record.get("blocks") or ():
                if block.get("kind") == "heading" or not block.get("markdown"):
                    continue
                path = tuple(block.get("heading_path") or ())
                if path == previous:
                    continue
                previous = path
                total += 1
                if path:
                    covered += 1
                elif len(examples) < EXAMPLES:
                    examples.append({"page": record.get("canonical_url"),
                                     "block": block.get("ordinal"),
                                     "text": str(block.get("markdown"))[:80]})
    value = _share(covered, total)
    return _result("heading_coverage", "Heading coverage", value,
                   thresholds.min_heading_coverage, higher_is_better=True,
                   figure=f"{covered}/{total} main-content units have a heading path "
                          f"({_pct(value)}; basis: {basis})",
                   details={"covered": covered, "total": total, "basis": basis},
                   examples=examples)


def breadcrumb_coverage(scan: PageScan, thresholds: Thresholds) -> dict[str, Any]:
    """Pages with any breadcrumb evidence, on a site where some page has some: a site
    whose pages show no trail at all (man pages, rustdoc, many Sphinx themes) has nothing
    to cover, and the figure says so instead of failing."""
    with_any = scan.pages - scan.breadcrumbs.get("none", 0)
    value = _share(with_any, scan.pages) if with_any else None
    counts = {name: scan.breadcrumbs.get(name, 0)
              for name in ("visible", "jsonld", "visible-and-jsonld", "none")}
    counts.update({k: v for k, v in scan.breadcrumbs.items() if k not in counts})
    none_at_all = ("; no page shows a trail, visible or in structured data (a site without "
                   "breadcrumbs, or a trail the extractor does not know)"
                   if scan.pages and not with_any else "")
    return _result("breadcrumb_coverage", "Breadcrumb coverage", value,
                   thresholds.min_breadcrumb_coverage, higher_is_better=True,
                   figure=f"{with_any}/{scan.pages} pages have breadcrumb evidence "
                          f"({_pct(value)}): " + ", ".join(f"{k} {v}" for k, v in counts.items())
                          + none_at_all,
                   details={"by_source": counts},
                   examples=[{"url": url, "breadcrumb_source": "none"}
                             for url in scan.no_breadcrumb])


def link_ambiguity(scan: PageScan, thresholds: Thresholds) -> dict[str, Any]:
    """Links with generic text and no recoverable context: no container label and no
    heading path (a preceding heading names what a "Read more" is about: W3C H80)."""
    value = _share(scan.ambiguous, scan.links)
    return _result("link_ambiguity", "Link ambiguity", value, thresholds.max_link_ambiguity,
                   higher_is_better=False,
                   figure=f"{scan.ambiguous}/{scan.links} links have generic text and neither "
                          f"a container label nor a heading path ({_pct(value)})",
                   details={"ambiguous": scan.ambiguous, "links": scan.links,
                            "texts": dict(scan.ambiguous_texts.most_common(10))},
                   examples=scan.ambiguous_examples)


def template_detection(scan: PageScan, thresholds: Thresholds) -> dict[str, Any]:
    """Regions whose link set repeats across pages; main content must not."""
    needed = max(thresholds.template_min_pages, 2)
    templates = sorted(
        ({"region": region, "pages": count, "links": links, "example_page": example}
         for (region, _), (count, example, links) in scan.region_signatures.items()
         if count >= needed),
        key=lambda item: (-item["pages"], item["region"]))
    main = [t for t in templates if t["region"] == "main_content"]
    repeated_main = sum(t["pages"] for t in main)
    value = _share(repeated_main, scan.pages)
    nav = [t for t in templates if t["region"] != "main_content"]
    regions = Counter(t["region"] for t in nav)
    figure = (f"{len(nav)} navigation templates repeated on >= {needed} pages ("
              + (", ".join(f"{r} {n}" for r, n in regions.most_common()) or "none")
              + f"); main content repeated on {repeated_main}/{scan.pages} pages "
              f"({_pct(value)})")
    examples = [{**t, "problem": "main content repeats across pages"} for t in main]
    examples += [{**t, "problem": "unclassified region repeats across pages"}
                 for t in nav if t["region"] == "unknown"]
    examples += [{"example_page": url, "problem": "main content chosen by fallback"}
                 for url in scan.fallback_pages]
    return _result("template_detection", "Template detection", value,
                   thresholds.max_template_main_share, higher_is_better=False, figure=figure,
                   details={"templates": templates[:50], "min_pages": needed},
                   examples=examples)


def identity_agreement(scan: PageScan, thresholds: Thresholds) -> dict[str, Any]:
    """Title, main heading and canonical URL agree (all three, or two of three)."""
    agreeing = scan.identity.get("agree", 0) + scan.identity.get("majority", 0)
    value = _share(agreeing, scan.pages)
    counts = {name: scan.identity.get(name, 0)
              for name in ("agree", "majority", "disagree", "missing")}
    order = {"disagree": 0, "missing": 1, "majority": 2}
    examples = sorted(scan.identity_examples, key=lambda e: order.get(e["status"], 3))
    return _result("identity_agreement", "Identity agreement", value,
                   thresholds.min_identity_agreement, higher_is_better=True,
                   figure=f"{agreeing}/{scan.pages} pages have an agreeing identity "
                          f"({_pct(value)}): " + ", ".join(f"{k} {v}" for k, v in counts.items()),
                   details={"by_status": counts}, examples=examples)


def fragment_resolution(scan: PageScan, thresholds: Thresholds) -> dict[str, Any]:
    """Table-of-contents and in-page fragment targets that resolve to a heading anchor or
    another element of the main content (`fragment_ids`: a glossary term, an option).
    A page's skip link (its first link, to its own template) is left out and counted."""
    for page_url, base, fragment in scan.cross_page_fragments:
        target = scan.url_index.get(norm_url(base))
        scan.resolve_fragment(page_url, base, fragment,
                              None if target is None else scan.anchors[target])
    scan.cross_page_fragments.clear()
    resolved, unresolved, outside, skips = (scan.fragments[name] for name in
                                            ("resolved", "unresolved", "outside_crawl",
                                             "skip_links"))
    examples = scan.fragment_examples
    total = resolved + unresolved
    value = _share(resolved, total)
    return _result("fragment_resolution", "Fragment resolution", value,
                   thresholds.min_fragment_resolution, higher_is_better=True,
                   figure=f"{resolved}/{total} table-of-contents/in-page fragment targets "
                          f"resolve to a heading or an element of the main content "
                          f"({_pct(value)}); {outside} point outside the "
                          f"crawl; {skips} skip links left out; "
                          f"{scan.fragment_warnings} unresolved_fragment warnings",
                   details={"resolved": resolved, "unresolved": unresolved,
                            "outside_crawl": outside, "skip_links": skips,
                            "unresolved_fragment_warnings": scan.fragment_warnings},
                   examples=examples)


def section_precision(scan: ChunkScan, thresholds: Thresholds) -> dict[str, Any]:
    """Chunks holding a heading that their heading path and sections do not name."""
    value = _share(scan.unnamed, scan.chunks)
    return _result("section_precision", "Section precision", value,
                   thresholds.max_unnamed_section_share, higher_is_better=False,
                   figure=f"{scan.unnamed}/{scan.chunks} chunks hold a heading that neither "
                          f"their heading path nor their sections name ({_pct(value)})",
                   details={"unnamed": scan.unnamed, "chunks": scan.chunks},
                   examples=scan.unnamed_examples)


def plain_headings(scan: ChunkScan, thresholds: Thresholds) -> dict[str, Any]:
    """Headings in chunk Markdown written as a link instead of plain text."""
    value = _share(scan.linked, scan.headings)
    return _result("plain_headings", "Plain headings", value,
                   thresholds.max_linked_heading_share, higher_is_better=False,
                   figure=f"{scan.linked}/{scan.headings} headings in chunks are written as a "
                          f"link ({_pct(value)})",
                   details={"linked": scan.linked, "headings": scan.headings},
                   examples=scan.linked_examples)


def format_checks(report: dict[str, Any]) -> str:
    """The results as text, one block per check."""
    lines = [f"checks of {report['output']}  ({report['site']}, {report['pages']} pages)"]
    for check in report["checks"]:
        mark = "PASS" if check["passed"] else "FAIL"
        value = check["value"]
        if check["name"] in COUNTED:
            shown, limit = f"{value:g}", f"{check['comparison']} {check['threshold']:g}"
        else:
            shown = _pct(value)
            limit = (f"{check['comparison']} {check['threshold']:.0%}" if value is not None
                     else "")
        lines.append(f"{mark}  {check['title']}: {shown} {limit}".rstrip())
        lines.append(f"      {check['figure']}")
        for template in check["details"].get("templates", [])[:5]:
            lines.append(f"      template: {template['region']} on {template['pages']} pages, "
                         f"{template['links']} links, e.g. {template['example_page']}")
        for example in check["examples"]:
            lines.append("      e.g. " + ", ".join(f"{k}={v}" for k, v in example.items()
                                                  if v not in (None, "", [])))
    failed = [c["name"] for c in report["checks"] if not c["passed"]]
    lines.append("all checks passed" if not failed else f"FAILED: {', '.join(failed)}")
    return "\n".join(lines)

