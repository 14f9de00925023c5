"""The canonical URL and the aliases of a page do not depend on the order its copies arrive
in: in one process (the real deduplication pipeline on a real crawl session) and across
workers (`docscrawl merge`'s plan, with parts, records and events shuffled)."""

from __future__ import annotations

import contextlib
import itertools
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lxml import html
from scrapy.exceptions import DropItem

from docscrawl.config import CrawlConfig
from docscrawl.crawl.items import FetchedPage
from docscrawl.crawl.session import CrawlSession
from docscrawl.dedup.content import content_hash
from docscrawl.dedup.pipeline import DedupPipeline
from docscrawl.discovery.pagetrack import PageTrack
from docscrawl.extract.model import PageExtract, VersionInfo
from docscrawl.extract.version import page_version_key
from docscrawl.inspect.consolidate import PageSummary, plan_merge

SITE = "https://docs.example/"
# one page served at four URLs; the second declares no canonical, none does
MARKDOWN = "# Guide\n\nThe same text."
SPELLINGS = [SITE + "guide/index.html", SITE + "guide/", SITE + "latest/guide/",
             SITE + "guide/?lang=en"]


def label(url: str) -> VersionInfo:
    """The version each copy's own extraction gives: the alias URL says `latest`."""
    return VersionInfo("latest" if "/latest/" in url else "2.0", "consistent")


@contextlib.contextmanager
def run_pipeline(tmp_path: Path, order: list[tuple[str, str | None]]) -> Iterator[CrawlSession]:
    """A session whose pipeline took the pages in `order`; on leaving, its files are closed
    and its ledger deleted (a scratch directory under /tmp, left behind otherwise)."""
    session = CrawlSession(CrawlConfig(site=SITE, out_dir=tmp_path))
    pipeline = DedupPipeline(session.parts)
    for url, declared in order:
        track = PageTrack(url, url, 1)
        track.observe(url)
        extract = PageExtract(markdown=MARKDOWN, canonical_href=declared, version=label(url))
        item = FetchedPage(track=track, final_url=url, status=200, content_type="text/html",
                           etag=None, last_modified=None, fetch_mode="http",
                           retrieved_at="2026-01-01T00:00:00Z", root=html.fromstring("<p/>"),
                           extract=extract)
        with contextlib.suppress(DropItem):  # a copy of the page: dropped
            pipeline.process_item(item)
    try:
        yield session
    finally:
        session.parts.outputs.close()
        session.parts.log.close()
        session.parts.ledger.close()


def final_canonical(session: CrawlSession) -> str:
    """The group's canonical URL (written records follow it at the end: `renames`)."""
    keys = {(page_version_key([], url), content_hash(MARKDOWN)) for url in SPELLINGS}
    (key,) = keys  # all four spellings are one version
    return session.parts.dedup.content_groups.get(key).canonical


@pytest.mark.parametrize("declared", [None, SITE + "guide/index.html"])
def test_one_process_picks_the_same_canonical_in_every_order(
    tmp_path: Path, declared: str | None,
) -> None:
    """Without a rel=canonical the preferred URL wins (`guide/`); a page declaring one
    makes it win, whether that page comes first or last."""
    chosen = set()
    for n, order in enumerate(itertools.permutations(SPELLINGS)):
        pages = [(url, declared if url == SPELLINGS[2] else None) for url in order]
        with run_pipeline(tmp_path / str(n), pages) as session:
            chosen.add(final_canonical(session))
    assert chosen == {declared or SITE + "guide/"}


def test_the_kept_record_takes_the_version_of_its_canonical_page(tmp_path: Path) -> None:
    """The record is written by the first copy to arrive; when a better URL turns up it
    takes that page's version (and title) too, so `latest/guide/` arriving first leaves no
    `latest` label on `guide/`."""
    labels = set()
    for n, order in enumerate(itertools.permutations(SPELLINGS)):
        with run_pipeline(tmp_path / str(n), [(url, None) for url in order]) as session:
            canonical = final_canonical(session)
            relabel = session.parts.dedup.relabels.get(canonical)
        written = label(order[0]).value
        fields = relabel or {"version": {"value": written}}
        labels.add((canonical, fields["version"]["value"]))
    assert labels == {(SITE + "guide/", "2.0")}


def _parts() -> tuple[list[tuple[int, dict[str, Any]]], list[tuple[int, dict[str, Any]]]]:
    """Two workers' records and log events of one crawl: worker 0 wrote `guide/index.html`
    (and saw a tracking variant of it), worker 1 wrote `guide/` and followed a redirect."""
    def record(url: str, observed: list[str]) -> dict[str, Any]:
        return {"id": "sha256:" + url, "canonical_url": url, "final_url": url,
                "observed_urls": observed, "content_hash": "sha256:same",
                "version": {"value": "v2"}, "discovery": [{"reason": "in_page", "from": SITE}]}
    records = [(0, record(SPELLINGS[0], [SPELLINGS[0]])), (1, record(SPELLINGS[1], [SPELLINGS[1]])),
               (1, record(SITE + "other.html", [SITE + "other.html"]) | {"content_hash": "x"})]
    events = [
        (0, {"event": "skipped", "reason": "duplicate_url", "url": SPELLINGS[0] + "?utm_source=a",
             "rule": SPELLINGS[0]}),
        (1, {"event": "duplicate", "reason": "redirect", "url": SITE + "old-guide",
             "duplicate_of": SPELLINGS[1]}),
        (0, {"event": "extracted", "url": SPELLINGS[0]}),
        (1, {"event": "extracted", "url": SPELLINGS[1]}),
        (1, {"event": "discovered", "url": SITE + "old-guide",
             "discovery": {"reason": "in_page", "from": SITE + "other.html"}}),
    ]
    return records, events


def test_merge_plan_is_the_same_whatever_the_order() -> None:
    records, events = _parts()
    results = set()
    rng = random.Random(20)
    for _ in range(30):
        swap = rng.random() < 0.5  # the same parts given in the other order
        rec = [(1 - p if swap else p, r) for p, r in records]
        evt = [(1 - p if swap else p, e) for p, e in events]
        rng.shuffle(rec)
        rng.shuffle(evt)
        plan = plan_merge([PageSummary.of(p, i, r) for i, (p, r) in enumerate(rec)], evt)
        results.add(tuple(sorted((page.canonical_url, frozenset(page.observed_urls))
                                 for page in plan.pages)))
    assert len(results) == 1
    (pages,) = results
    assert dict(pages)[SPELLINGS[1]] == frozenset({
        SPELLINGS[0], SPELLINGS[1], SPELLINGS[0] + "?utm_source=a", SITE + "old-guide"})
    assert len(pages) == 2
