"""Pipeline step 2: canonical URL and content hash; identical pages become one record.

Pages are the same when their normalized Markdown hashes the same *and* they belong to the
same documentation version (`docscrawl.extract.version.page_version_key`: the version the
URL names, else a non-default alias the page shows). `/x/`, `/x/index.html` and
`/latest/x/` merge; `/3.6/x/`, `/next/x/` and `/x/` never do: identical text in two
versions is two page records, each with its own version. The record's canonical URL follows
`docscrawl.dedup.canonical`: a usable `rel=canonical` first, else the preferred URL among
the pages that served the content, whatever order they were fetched in.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, Self

from docscrawl.crawl.items import CarriedPage, FetchedPage, PageEnded
from docscrawl.crawl.ledger import ContentGroup, ContentGroups, GroupKey, SqlSet
from docscrawl.crawl.stage import CrawlParts
from docscrawl.dedup.canonical import CanonicalChoice, choose_canonical, rank
from docscrawl.dedup.content import content_hash
from docscrawl.dedup.state import record_merged
from docscrawl.discovery.urls import normalize_url
from docscrawl.export.records import as_dict
from docscrawl.extract.model import VersionEvidence
from docscrawl.extract.version import evidence_of, page_version_key
from docscrawl.vocab import DuplicateReason, Event, FailReason

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

# The version object of a stored page record, read without parsing the whole record
# (its evidence list holds flat objects of version tokens: the first "]}" closes it).
_VERSION_OBJECT = re.compile(r'"version":\s*(\{"value":.*?"evidence":\s*\[.*?\]\s*\})')


def _stored_evidence(record_json: str | None) -> list[VersionEvidence]:
    match = _VERSION_OBJECT.search(record_json or "")
    return evidence_of(json.loads(match.group(1))) if match else []


class DedupPipeline:
    """Sets `canonical_url` and `content_hash`; drops content duplicates as `duplicate`.

    Its groups and the canonical URLs in use are the crawl's `DedupState` (kept in the
    crawl's ledger, on disk: they grow with the site)."""

    def __init__(self, parts: CrawlParts) -> None:
        self.parts = parts

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(CrawlParts.of(crawler))

    @property
    def _groups(self) -> ContentGroups:
        return self.parts.dedup.content_groups

    @property
    def _taken(self) -> SqlSet:
        return self.parts.dedup.canonicals_taken

    def process_item(self, item: Any) -> Any:
        if isinstance(item, CarriedPage):
            return self._carried(item)
        if not isinstance(item, FetchedPage):
            return item
        digest = content_hash(item.extracted.markdown)
        item.content_hash = digest
        stored = self._stored_unchanged(item, digest)
        if stored is not None:  # same content as last crawl: keep its canonical and chunks
            return self._carried(stored)
        key = (page_version_key(item.extracted.version.evidence, item.final_url), digest)
        choice = choose_canonical(item.final_url, item.extracted.canonical_href,
                                  self.parts.frontier.scope)
        group = self._groups.get(key)
        if group is not None:
            # The URL the group was written under, before a better one may replace it:
            # a variant differing from it by one query parameter teaches the frontier.
            self.parts.frontier.params.learn_duplicate(item.track.url, group.canonical)
            self._reelect(key, group, choice, item)
            raise self._merge_duplicate(item, group.canonical)
        if choice.warning:
            item.warnings.append({"code": choice.warning[0], "detail": choice.warning[1]})
        canonical = self._unused(item, choice.url)
        item.canonical_url = canonical
        declared = choice.declared and canonical == choice.url
        self._groups.put(key, ContentGroup(canonical, declared))
        self._taken.add(canonical)
        self.parts.resume.journal_group(canonical, declared)
        return item

    def _stored_unchanged(self, item: FetchedPage, digest: str) -> CarriedPage | None:
        """The page as the last crawl stored it, when its content hash is unchanged."""
        incremental = self.parts.incremental
        row = incremental.row_for(item.track.key) or incremental.row_for(item.final_url)
        if row is None or not row.can_carry_over or row.content_hash != digest:
            return None
        lines = incremental.lines_for(row)
        if lines is None:  # the previous output no longer holds them: extracted again
            return None
        if not self.parts.outputs.templates.available(lines.page):
            return None  # its template blocks are gone: written as extracted
        return CarriedPage(
            track=item.track, row=row, lines=lines, final_url=item.final_url, status=item.status,
            etag=item.etag, last_modified=item.last_modified, fetch_mode=item.fetch_mode,
            body_digest=item.body_digest, elapsed_ms=item.elapsed_ms, size=item.size,
            found_links=item.found_links, parsed=True,
        )

    def _carried(self, item: CarriedPage) -> CarriedPage:
        """An unchanged page keeps its stored canonical URL; it still deduplicates."""
        row = item.row
        key = (page_version_key(_stored_evidence(item.lines.page), item.final_url),
               row.content_hash)
        group = self._groups.get(key)
        if group is not None or row.canonical_url in self._taken:
            canonical = group.canonical if group is not None else row.canonical_url
            raise self._merge_duplicate(item, canonical)
        self._groups.put(key, ContentGroup(row.canonical_url, declared=True))
        self._taken.add(row.canonical_url)
        return item

    def _unused(self, item: FetchedPage, canonical: str) -> str:
        """The canonical URL, or the page's own URL when another page already holds it."""
        if canonical not in self._taken:
            return canonical
        own = normalize_url(item.final_url)
        item.warnings.append({"code": "canonical_conflict",
                              "detail": f"{canonical} already names a page with other content"})
        if own in self._taken:
            raise PageEnded(f"canonical conflict {own}", Event.FAILED,
                            reason=FailReason.CANONICAL_CONFLICT,
                            rule=f"canonical URL {own} already taken",
                            status=item.status, fetch_mode=item.fetch_mode)
        return own

    def _reelect(self, key: GroupKey, group: ContentGroup, choice: CanonicalChoice,
                 item: FetchedPage) -> None:
        """A duplicate may carry a better canonical than the one written (`rank`: the same
        choice whatever order the group's pages arrive in); the record then takes this
        page's version and title too (`/docs/x`'s 2.0, not `/docs/latest/x`'s alias)."""
        if choice.url == group.canonical:  # named again, now perhaps by a rel=canonical
            if choice.declared and not group.declared:
                group.declared = True
                self._groups.put(key, group)
                self.parts.resume.journal_group(group.canonical, True)
            return
        if choice.url in self._taken:
            return
        if rank(choice.url, declared=choice.declared) < rank(group.canonical,
                                                             declared=group.declared):
            self._taken.discard(group.canonical)
            self._taken.add(choice.url)
            fields = {"version": as_dict(item.extracted.version), "title": item.extracted.title}
            self.parts.dedup.rename_canonical(group.canonical, choice.url, fields)
            self.parts.resume.journal_rename(group.canonical, choice.url, fields)
            group.canonical, group.declared = choice.url, choice.declared
            self._groups.put(key, group)
            self.parts.resume.journal_group(choice.url, choice.declared)

    def _merge_duplicate(self, item: FetchedPage | CarriedPage, canonical: str) -> PageEnded:
        """The page joins the record written at `canonical`; the end of its story."""
        track = item.track
        track.observe(item.final_url)
        self.parts.frontier.params.learn_duplicate(track.url, canonical)
        record_merged(self.parts.incremental, canonical, track)
        return PageEnded(
            f"duplicate of {canonical}", Event.DUPLICATE, reason=DuplicateReason.SAME_CONTENT,
            duplicate_of=canonical, status=item.status, redirect_chain=track.redirect_chain,
            fetch_mode=item.fetch_mode,
        )
