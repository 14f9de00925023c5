"""SeenUrls: URLs past `keep` go to the ledger and are found there again."""

from __future__ import annotations

from docscrawl.crawl.ledger import Ledger
from docscrawl.discovery.seenurls import ABSENT, SeenUrls


def test_urls_leave_memory_and_keep_their_keys(ledger: Ledger) -> None:
    seen = SeenUrls(ledger.seen_table(), keep=8)
    urls = [f"https://docs.example.com/p{n}" for n in range(100)]
    for n, url in enumerate(urls):
        seen[url] = url if n % 3 == 0 else (None if n % 3 == 1 else urls[0])
    assert seen.spilled >= 80 and len(ledger.seen_table()) >= 80
    assert seen.get(urls[0]) == urls[0]
    assert urls[1] in seen and seen.get(urls[1]) is None
    assert seen.get(urls[2]) == urls[0]
    assert seen.lookup("https://docs.example.com/never") is ABSENT
    assert "https://docs.example.com/never" not in seen


def test_a_changed_entry_replaces_the_one_on_disk(ledger: Ledger) -> None:
    seen = SeenUrls(ledger.seen_table(), keep=2)
    seen["https://a/x"] = None
    for n in range(10):
        seen[f"https://a/{n}"] = None
    assert seen.get("https://a/x") is None and "https://a/x" in seen
    seen["https://a/x"] = "https://a/y"
    for n in range(10):
        seen.lookup(f"https://a/{n}")
    assert seen.get("https://a/x") == "https://a/y"


def test_add_all_keeps_known_keys() -> None:
    seen = SeenUrls()
    seen["https://a/1"] = "https://a/1"
    seen.add_all(["https://a/1", "https://a/2"])
    assert seen.get("https://a/1") == "https://a/1"
    assert "https://a/2" in seen and seen.get("https://a/2") is None
    assert seen.spilled == 0
