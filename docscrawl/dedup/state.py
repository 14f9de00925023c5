"""What deduplication keeps for one crawl, and what it decided that the end of the crawl
applies to records already written.

The content groups and the canonical URLs in use grow with the site: they live in the
crawl's ledger, on disk (`docscrawl.crawl.ledger`). A better canonical URL found after a
page was written is a rename (`renames`, with the `version` and `title` of the page at that
URL in `relabels`), applied once when the crawl ends (`docscrawl.crawl.finish`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from docscrawl.crawl.ledger import ContentGroups, Ledger, SqlSet
from docscrawl.dedup.aggregates import AggregateTracker

if TYPE_CHECKING:
    from docscrawl.discovery.pagetrack import PageTrack
    from docscrawl.incremental.recrawl import Incremental


class DedupState:
    """Content groups, canonical URLs taken, renames and aggregate candidates of a crawl."""

    def __init__(self, ledger: Ledger) -> None:
        self.content_groups: ContentGroups = ledger.content_groups()
        self.canonicals_taken: SqlSet = ledger.url_set("canonicals_taken")
        self.renames: dict[str, str] = {}  # canonical URL written -> better one found later
        # that better URL -> its page's `version` and `title` (`rename_canonical`)
        self.relabels: dict[str, dict[str, Any]] = {}
        self.aggregates = AggregateTracker(samples=ledger.json_map("aggregate_samples"),
                                           by_hash=ledger.json_map("aggregate_by_hash"))

    def rename_canonical(self, old: str, new: str, fields: dict[str, Any]) -> None:
        """A better URL for a written page turned up: its records follow at the end, and
        take the `version` and `title` of the page at that URL (`fields`), so that which
        copy of a page was fetched first decides neither its URL nor what it is called."""
        self.renames[old] = new
        self.relabels[new] = fields

    def resolved_renames(self) -> dict[str, str]:
        """Every rename with its chains followed (`resolve_renames`)."""
        return resolve_renames(self.renames)


def resolve_renames(renames: dict[str, str]) -> dict[str, str]:
    """Follow rename chains (a -> b -> c becomes a -> c, b -> c)."""
    resolved = {}
    for old in renames:
        new, hops = renames[old], 0
        while new in renames and hops < len(renames):
            new, hops = renames[new], hops + 1
        resolved[old] = new
    return resolved


def record_merged(incremental: Incremental, canonical_url: str, track: PageTrack) -> None:
    """A content duplicate joins a written record: its URLs count for that record (in the
    track, for the end of the crawl, and in the incremental state)."""
    track.merged_into = canonical_url
    incremental.add_aliases(canonical_url, list(track.observed))
