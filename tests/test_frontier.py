"""The frontier's admission order and bookkeeping, without Scrapy."""

from __future__ import annotations

import re

from docscrawl.discovery.frontier import Frontier, extension_of, origin_of
from docscrawl.discovery.netguard import AddressGuard
from docscrawl.discovery.robots import RobotsPolicy
from docscrawl.discovery.scope import Scope

SITE = "https://docs.example.com/v2/"
ORIGIN = "https://docs.example.com"


def make_frontier(**kwargs: object) -> Frontier:
    frontier = Frontier(Scope(SITE, deny=(re.compile("/v2/old/"),)),
                        AddressGuard("docs.example.com"), **kwargs)  # type: ignore[arg-type]
    frontier.robots[ORIGIN] = RobotsPolicy.from_response(
        200, b"User-agent: *\nDisallow: /v2/private/\n")
    return frontier


def offer_and_admit(frontier: Frontier, url: str, depth: int = 1):
    verdict = frontier.offer(url, "in_page", SITE, depth)
    if verdict.action == "wait_robots":
        return frontier.admit(url, "in_page", SITE, depth)
    return verdict


def test_policies_in_order() -> None:
    frontier = make_frontier(max_depth=2)
    cases = {
        "https://docs.example.com/blog/": ("out_of_scope", "scope: https://docs.example.com/v2/"),
        "https://docs.example.com/v2/old/a.html": ("denied_by_rule", "/v2/old/"),
        "https://docs.example.com/v2/manual.pdf": ("non_html", "file extension .pdf"),
        "https://docs.example.com/v2/private/x.html": ("robots", "Disallow: /v2/private/"),
    }
    for url, (reason, rule) in cases.items():
        verdict = offer_and_admit(frontier, url)
        assert (verdict.action, verdict.reason, verdict.rule) == ("skip", reason, rule), url
    deep = offer_and_admit(frontier, "https://docs.example.com/v2/deep.html", depth=3)
    assert (deep.reason, deep.rule) == ("max_depth", "max_depth=2")


def test_an_over_long_url_is_skipped_without_limiting_the_crawl() -> None:
    frontier = make_frontier(url_limit=80, max_pages=5)
    url = SITE + "a" * 80 + ".html"
    verdict = offer_and_admit(frontier, url)
    assert (verdict.action, verdict.reason) == ("skip", "trap")
    assert verdict.rule == f"URLLENGTH_LIMIT=80 ({len(url)} characters)" and verdict.first
    assert not frontier.limited and frontier.admitted == 0
    assert offer_and_admit(frontier, SITE + "short.html").action == "fetch"


def test_private_address_for_public_seed() -> None:
    frontier = Frontier(Scope(SITE, allow=(re.compile("."),)), AddressGuard("docs.example.com"))
    verdict = frontier.offer("http://127.0.0.1:8080/v2/", "in_page", SITE, 1)
    assert (verdict.action, verdict.reason) == ("skip", "private_address")


def test_duplicate_url_joins_the_owner_and_is_logged_once() -> None:
    frontier = make_frontier()
    offered = frontier.offer("https://docs.example.com/v2/a.html", "in_page", SITE, 1)
    assert offered.first and offered.action == "wait_robots"
    first = frontier.admit("https://docs.example.com/v2/a.html", "in_page", SITE, 1)
    assert first.action == "fetch"
    again = frontier.offer("https://docs.example.com/v2/a.html", "sidebar", SITE, 1)
    assert again.action == "known" and not again.first
    alias = offer_and_admit(frontier, "https://DOCS.example.com:443/v2/a.html?utm_source=x")
    assert (alias.reason, alias.rule) == ("duplicate_url", "https://docs.example.com/v2/a.html")
    track = first.track
    assert track is not None
    assert list(track.observed) == ["https://docs.example.com/v2/a.html",
                                    "https://DOCS.example.com:443/v2/a.html?utm_source=x"]
    assert ("sidebar", SITE) in track.discovery
    assert {"reason": "sidebar", "from": SITE} in track.discovery_records()


def test_max_pages_counts_admitted_pages_and_redirects_keep_their_slot() -> None:
    frontier = make_frontier(max_pages=1)
    first = offer_and_admit(frontier, "https://docs.example.com/v2/a.html")
    assert first.action == "fetch"
    assert offer_and_admit(frontier, "https://docs.example.com/v2/b.html").reason == "max_pages"
    assert frontier.limited
    assert first.track is not None
    frontier.offer("https://docs.example.com/v2/c.html", "redirect", None, 1)
    moved = frontier.admit("https://docs.example.com/v2/c.html", "redirect", None, 1,
                           inherit=first.track)
    assert moved.action == "fetch" and moved.track is not None
    assert moved.track.fetched_url == "https://docs.example.com/v2/a.html"
    assert "https://docs.example.com/v2/a.html" in moved.track.observed


def test_unknown_robots_waits() -> None:
    frontier = Frontier(Scope(SITE), AddressGuard("docs.example.com"))
    assert frontier.admit(SITE, "seed", None, 0).action == "wait_robots"


def test_helpers() -> None:
    assert origin_of("HTTP://Docs.Example.com:8080/x") == "http://docs.example.com:8080"
    assert extension_of("https://d.example/a/b.PDF?x=1") == ".pdf"
    assert extension_of("https://d.example/a/.hidden") == ""


def test_discovery_list_is_bounded_but_keeps_every_reason() -> None:
    from docscrawl.discovery.pagetrack import MAX_DISCOVERY_ENTRIES, PageTrack

    track = PageTrack(url="https://d.example/v2/", key="https://d.example/v2/", depth=0,
                      discovery=[("seed", None)])
    for n in range(MAX_DISCOVERY_ENTRIES + 50):
        track.add_discovery("sidebar", f"https://d.example/v2/p{n}.html")
    track.add_discovery("sidebar", "https://d.example/v2/p1.html")  # already there
    track.add_discovery("footer_navigation", "https://d.example/v2/p9.html")
    track.add_discovery("redirect", "https://d.example/v2/old-a.html")
    track.add_discovery("redirect", "https://d.example/v2/old-b.html")  # aliases: all kept
    assert track.discovery[-2:] == [("redirect", "https://d.example/v2/old-a.html"),
                                    ("redirect", "https://d.example/v2/old-b.html")]
    assert track.discovery_count == MAX_DISCOVERY_ENTRIES + 3
    assert track.discovery_dropped == 51
    assert track.discovery_records()[-3] == {"reason": "footer_navigation",
                                             "from": "https://d.example/v2/p9.html"}


def test_track_survives_the_disk_queue_and_shares_equal_strings() -> None:
    """Requests are pickled into Scrapy's disk queue with their track."""
    import pickle

    from docscrawl.discovery.pagetrack import PageTrack

    url = "https://d.example/v2/a.html"
    track = PageTrack(url, "https://d.example/v2/a.html", 2, [("sitemap", None)],
                      sitemap_lastmod="2026-01-01", redirect_chain=["https://d.example/old"])
    assert track.key is track.url  # equal normalized URL: one string kept, not two
    track.observe(url)
    track.observe(url)
    track.add_discovery("sidebar", "https://d.example/v2/")
    track.mark_written("https://d.example/v2/a.html")
    copy = pickle.loads(pickle.dumps(track))
    assert copy == track and copy is not track
    assert copy.observed == (url,) and copy.redirect_chain == ("https://d.example/old",)
    assert copy.discovery == [("sitemap", None), ("sidebar", "https://d.example/v2/")]
    assert (copy.written, copy.written_observed, copy.written_discovery,
            copy.written_lastmod) == (True, 1, 2, "2026-01-01")
    copy.add_discovery("in_page", "https://d.example/v2/b.html")
    assert copy != track


def test_an_alias_and_the_page_share_one_track() -> None:
    frontier = make_frontier()
    page = f"{SITE}a.html"
    assert offer_and_admit(frontier, page).action == "fetch"
    alias = "https://DOCS.example.com:443/v2/a.html?utm_source=x"
    assert offer_and_admit(frontier, alias).reason == "duplicate_url"
    track = frontier.track_for(page)
    assert track is not None and frontier.track_for(alias) is track
    again = frontier.offer(alias, "footer_navigation", page, 2)
    assert again.action == "known" and again.track is track
    assert ("footer_navigation", page) in track.discovery
    skipped = offer_and_admit(frontier, f"{SITE}private/x.html")
    assert skipped.reason == "robots" and frontier.track_for(f"{SITE}private/x.html") is None
    assert frontier.offer(f"{SITE}private/x.html", "in_page", SITE, 1).action == "known"
    assert list(frontier.tracks()) == [track]


def test_what_a_sitemap_says_before_a_page_is_carried_over_is_growth_either_way() -> None:
    """A re-crawl carries a page record over as the last run wrote it. An alias of the page
    or a new lastmod, read in a sitemap before the page was carried over, is as new to
    that record as when read after: the end of the crawl writes it (and an alias ranks
    the inbound links again). (Counting what the track held at the carry hid both: a CI
    run where the sitemap came first kept the inbound links.)"""
    from docscrawl.crawl.finish import record_growth
    from docscrawl.discovery.pagetrack import PageTrack

    page, alias = f"{SITE}a.html", f"{SITE}a.html?utm_source=feed"
    for sitemap_first in (True, False):
        track = PageTrack(page, page, 1, [("sitemap", None)])
        track.observe(page)
        if sitemap_first:
            track.observe(alias)
            track.sitemap_lastmod = "2026-12-05"
        track.mark_carried(page, [page], "2026-11-20")  # as the last run's record lists
        if not sitemap_first:
            track.observe(alias)
            track.sitemap_lastmod = "2026-12-05"
        grown = record_growth([track])
        assert grown["observed_urls"] == [page, alias]
        assert len(grown["observed_urls"]) > (track.written_observed or 0)
        assert grown["sitemap_lastmod"] == "2026-12-05"
    unchanged = PageTrack(page, page, 1, [("sitemap", None)], sitemap_lastmod="2026-11-20")
    unchanged.observe(page)
    unchanged.mark_carried(page, [page, alias], "2026-11-20")  # the record already lists both
    assert unchanged.observed == (page, alias) and record_growth([unchanged]) == {}
    unlisted = PageTrack(page, page, 1, [("sitemap", None)])  # no lastmod this time
    unlisted.mark_carried(page, [page], "2026-11-20")
    assert record_growth([unlisted]) == {}  # the record keeps the one it lists


def test_robots_known_and_allows_are_the_frontiers_answers() -> None:
    """The spider's parking, a distributed worker's held tasks and a rendered page's guard
    ask the frontier about robots.txt instead of reading its policies themselves."""
    frontier = make_frontier()
    other = "https://cdn.example.com"
    assert frontier.robots_known(ORIGIN) and not frontier.robots_known(other)
    assert not frontier.robots_allows(f"{SITE}private/x.html")
    assert frontier.robots_allows(f"{SITE}guide.html")
    assert frontier.robots_allows(f"{other}/private/x.js")  # not known here: it goes
