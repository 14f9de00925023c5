"""Which pages of several crawl parts are one page, and what that page's record says.

A pure plan over the parts' page records and crawl-log events (no files, no Scrapy), so
that `docscrawl merge` gives what one process would have written, whatever the order the
pages arrived in, at each worker or across them:

- Page records and URLs join one page when they share a normalized URL (a page's
  canonical, final and observed URLs; a tracking variant skipped as `duplicate_url`), a
  redirect (`duplicate` / `redirect`: the source serves the target's page), the same
  content (`duplicate` / `same_content`, or the same content hash within a version).
- The page's canonical URL is the best candidate by `docscrawl.dedup.canonical.rank`:
  candidates are every fetched member's normalized final URL and every canonical URL a
  part chose for it (a part's choice that no member was fetched at came from a
  rel=canonical: declared). A killed worker never rewrote its records with a better URL it
  found later; its log's `duplicate_of` still names that URL, so it is a candidate.
- The page's observed URLs are those its records list plus every URL whose terminal event
  says it serves the page (tracking variants, redirect sources, content duplicates) in any
  part; its ways found gain each member URL's first discovery.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from docscrawl.dedup.canonical import rank
from docscrawl.discovery.pagetrack import DiscoveryRecord, PageTrack
from docscrawl.discovery.urls import normalize_url

__all__ = ["MergePlan", "PageSummary", "plan_merge"]

SAME_PAGE_EVENTS = frozenset({"extracted", "unchanged", "duplicate"})


@dataclass(slots=True)
class PageSummary:
    """What the plan needs of one page record of one part."""

    part: int
    line: int
    id: str
    canonical_url: str
    final_url: str
    observed_urls: list[str]
    content_key: tuple[Any, Any] | None  # (version value, content hash)
    discovery: list[dict[str, Any]]

    @classmethod
    def of(cls, part: int, line: int, record: dict[str, Any]) -> PageSummary:
        version = (record.get("version") or {}).get("value")
        digest = record.get("content_hash")
        return cls(part, line, str(record.get("id")), str(record.get("canonical_url")),
                   str(record.get("final_url") or record.get("canonical_url")),
                   list(record.get("observed_urls") or ()),
                   (version, digest) if digest else None, list(record.get("discovery") or ()))


@dataclass(slots=True)
class MergedPage:
    """One page of the merged output."""

    canonical_url: str
    kept: tuple[int, str]  # (part, page id) of the record written
    observed_urls: list[str]
    discovery: list[DiscoveryRecord]
    members: list[tuple[int, str]] = field(default_factory=list)  # every (part, page id)


@dataclass(slots=True)
class MergePlan:
    pages: list[MergedPage]
    renames: dict[str, str]  # a part's canonical URL -> the merged page's
    owner: dict[tuple[int, str], MergedPage]  # (part, page id) -> its merged page

    def canonical_of(self, part: int, page_id: Any) -> str | None:
        page = self.owner.get((part, str(page_id)))
        return page.canonical_url if page is not None else None


class _Union:
    """Union-find over string nodes."""

    def __init__(self) -> None:
        self.parent: dict[str, str] = {}

    def find(self, node: str) -> str:
        parent = self.parent.setdefault(node, node)
        while parent != node:
            grand = self.parent[parent]
            self.parent[node] = grand
            node, parent = parent, grand
        return node

    def join(self, one: str, two: str) -> None:
        a, b = self.find(one), self.find(two)
        if a != b:
            self.parent[max(a, b)] = min(a, b)  # the same roots whatever the order


def _url_node(url: str) -> str:
    return "u:" + normalize_url(url)


def plan_merge(records: Iterable[PageSummary],
               events: Iterable[tuple[int, dict[str, Any]]]) -> MergePlan:
    """The merged pages of the parts' page records and crawl-log events (any order)."""
    union = _Union()
    summaries = list(records)
    aliases: list[tuple[str, str]] = []  # (URL, node) of URLs that serve a page
    fetched_at: list[str] = []  # URLs a member was fetched at (undeclared candidates)
    chosen: list[str] = []  # canonical URLs the parts chose
    first_found: dict[str, dict[str, Any]] = {}
    redirects: list[tuple[str, dict[str, Any]]] = []  # (node, way found)
    for summary in summaries:
        node = _url_node(summary.canonical_url)
        for url in (summary.final_url, *summary.observed_urls):
            union.join(node, _url_node(url))
        if summary.content_key is not None:
            union.join(node, f"h:{summary.content_key!r}")
        fetched_at.append(summary.final_url)
        chosen.append(summary.canonical_url)
    for _, event in events:
        kind, url, reason = event.get("event"), str(event.get("url")), event.get("reason")
        if kind == "discovered" and event.get("discovery"):
            first_found.setdefault(url, event["discovery"])
        elif kind == "duplicate" and event.get("duplicate_of"):
            union.join(_url_node(url), _url_node(str(event["duplicate_of"])))
            aliases.append((url, _url_node(url)))
            if reason == "same_content":
                fetched_at.append(url)
                chosen.append(str(event["duplicate_of"]))
            else:  # a redirect: its target's page was found through it
                redirects.append((_url_node(url), {"reason": "redirect", "from": url}))
        elif kind == "skipped" and reason == "duplicate_url" and event.get("rule"):
            union.join(_url_node(url), "u:" + str(event["rule"]))
            aliases.append((url, _url_node(url)))
        elif kind in SAME_PAGE_EVENTS:
            aliases.append((url, _url_node(url)))
    return _build(union, summaries, aliases, fetched_at, chosen, first_found, redirects)


def _build(union: _Union, summaries: list[PageSummary], aliases: list[tuple[str, str]],
           fetched_at: list[str], chosen: list[str],
           first_found: dict[str, dict[str, Any]],
           redirects: list[tuple[str, dict[str, Any]]]) -> MergePlan:
    groups: dict[str, list[PageSummary]] = {}
    for summary in summaries:
        groups.setdefault(union.find(_url_node(summary.canonical_url)), []).append(summary)
    observed: dict[str, dict[str, None]] = {root: {} for root in groups}
    for root, members in groups.items():
        for summary in sorted(members, key=lambda s: (s.part, s.line)):
            observed[root].update(dict.fromkeys(summary.observed_urls))
    for url, node in aliases:
        root = union.find(node)
        if root in observed:
            observed[root].setdefault(url, None)
    served = {root: {normalize_url(url) for url in urls} for root, urls in observed.items()}
    candidates: dict[str, set[tuple[str, bool]]] = {root: set() for root in groups}
    for url in fetched_at:
        root = union.find(_url_node(url))
        if root in candidates:
            candidates[root].add((normalize_url(url), False))
    found_by_redirect: dict[str, list[dict[str, Any]]] = {}
    for node, item in redirects:
        found_by_redirect.setdefault(union.find(node), []).append(item)
    for url in chosen:
        root = union.find(_url_node(url))
        if root in candidates:
            candidates[root].add((url, url not in served[root]))
    pages: list[MergedPage] = []
    renames: dict[str, str] = {}
    owner: dict[tuple[int, str], MergedPage] = {}
    for root, members in groups.items():
        best = min(candidates[root], key=lambda c: rank(c[0], declared=c[1]))[0]
        kept = min(members, key=lambda s: (s.canonical_url != best, s.part, s.line))
        page = MergedPage(best, (kept.part, kept.id), list(observed[root]),
                          _discovery(members, observed[root], first_found,
                                     found_by_redirect.get(root, [])),
                          [(s.part, s.id) for s in members])
        pages.append(page)
        for summary in members:
            owner[(summary.part, summary.id)] = page
            if summary.canonical_url != best:
                renames[summary.canonical_url] = best
    pages.sort(key=lambda p: p.kept)
    return MergePlan(pages, renames, owner)


def _discovery(members: list[PageSummary], urls: dict[str, None],
               first_found: dict[str, dict[str, Any]],
               redirects: list[dict[str, Any]]) -> list[DiscoveryRecord]:
    """The ways found of the merged page, bounded like one crawl's (`PageTrack`)."""
    track = PageTrack("", "", 0)
    for summary in sorted(members, key=lambda s: (s.part, s.line)):
        for item in summary.discovery:
            track.add_discovery(item.get("reason") or "", item.get("from"))
    for url in urls:
        first = first_found.get(url)
        if first:
            track.add_discovery(first.get("reason") or "", first.get("from"))
    for item in redirects:
        track.add_discovery(item["reason"], item["from"])
    return track.discovery_records()
