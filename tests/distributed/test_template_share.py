"""One template table for the whole crawl: the warm-up sample (`docscrawl.extract.template.warmup`)
judged the same whatever order its pages arrive in, in one process or in two workers
sharing a real redis-server (`docscrawl.distributed.template_counts`)."""

from __future__ import annotations

import random

from docscrawl.distributed import SharedFrontier
from docscrawl.distributed.template_counts import SharedTemplateCounts
from docscrawl.extract.template.table import TemplateTable
from docscrawl.extract.template.warmup import SAMPLE_PAGES, Warmup, sample_of

SITE = "http://docs.example/docs/"
HEADER, FOOTER = 11, 12  # signatures the site's template repeats


def site() -> dict[str, tuple[list[str], list[int]]]:
    """URL -> (links, signatures): the header on every page, the footer on p0-p4 only
    (3 of 12 sample pages: not most), each page's own text."""
    pages = {SITE: ([SITE, "http://other.example/x", *(f"{SITE}p{n}.html" for n in range(20))],
                    [HEADER, 1000])}
    for n in range(20):
        own = [HEADER, 2000 + n] + ([FOOTER] if n < 5 else [])
        pages[f"{SITE}p{n}.html"] = ([SITE], own)
    return pages


def key_of(url: str) -> str | None:
    return url if url.startswith(SITE) else None


def crawl(order: list[str], warmups: list[Warmup]) -> None:
    """Offer pages in `order`, page i to worker i % len(warmups); stop when all froze.
    The worker that gets the seed parsed it: it knows the sample (the spider's)."""
    pages = site()
    for i, url in enumerate(order):
        warm = warmups[i % len(warmups)]
        links, signatures = pages[url]
        warm.offer((url,), signatures, sample_of(SITE, links, key_of) if url == SITE else None)
        if all([w.check() for w in warmups]):
            return
    for warm in warmups:  # the pipeline checks again while it holds pages
        warm.check()


def frozen(table: TemplateTable) -> tuple[int, tuple[int, ...]]:
    return table.pages, tuple(s for s in (HEADER, FOOTER, 1000) if table.is_template(s))


def test_sample_is_the_seed_and_in_scope_links_spread_over_its_links() -> None:
    assert sample_of(SITE, site()[SITE][0], key_of) == [
        SITE, *(f"{SITE}p{n}.html" for n in (0, 2, 4, 6, 8, 10, 11, 13, 15, 17, 19))]
    few = [SITE + "a.html", "http://other.example/", SITE + "b.html", SITE + "a.html"]
    assert sample_of(SITE, few, key_of) == [SITE, SITE + "a.html", SITE + "b.html"]
    assert len(sample_of(SITE, site()[SITE][0], key_of)) == SAMPLE_PAGES


def test_any_order_freezes_the_same_table() -> None:
    urls = list(site())
    results = set()
    for seed in range(6):
        order = urls[:]
        random.Random(seed).shuffle(order)  # the seed need not come first
        table = TemplateTable()
        crawl(order, [Warmup(table)])
        assert table.frozen
        results.add(frozen(table))
    assert results == {(12, (HEADER,))}  # the footer (5 of 12) is no template


def test_a_failed_sample_page_is_settled_not_waited_for() -> None:
    table = TemplateTable()
    warm = Warmup(table)
    pages = site()
    sample = sample_of(SITE, pages[SITE][0], key_of)
    for url in sample[:-1]:  # all but the last sample page
        warm.offer((url,), pages[url][1], sample)
    assert not warm.check()
    warm.settle(f"{SITE}p19.html?utm_source=x")  # another spelling ended: not the page
    assert not warm.check()
    warm.settle(f"{SITE}p19.html")  # the page itself failed
    assert warm.check() and table.pages == 11


def test_two_workers_on_redis_freeze_what_one_process_does(redis_server, crawl_key) -> None:
    single = TemplateTable()
    crawl(list(site()), [Warmup(single)])
    frontiers = [SharedFrontier(redis_server.url, crawl_key) for _ in range(2)]
    try:
        tables = [TemplateTable(), TemplateTable()]
        for table, frontier in zip(tables, frontiers, strict=True):
            table.share_with(SharedTemplateCounts(frontier.redis, frontier.keys))
        order = list(reversed(site()))  # the seed last, each page to another worker
        crawl(order, [Warmup(t) for t in tables])
        assert all(t.frozen for t in tables)
        assert {frozen(t) for t in tables} == {frozen(single)} == {(12, (HEADER,))}
        again = SharedTemplateCounts(frontiers[0].redis, frontiers[0].keys)
        pages, settled, counts = again.snapshot()
        assert len(pages) == 12 and len(settled) == 12 and counts  # a page counted once
        assert frontiers[0].reset() >= 4  # a reset deletes the template keys too
        assert again.snapshot() == (set(), set(), {})
    finally:
        for frontier in frontiers:
            frontier.close()
