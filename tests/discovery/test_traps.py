"""Trap caps per URL pattern and per path."""

from __future__ import annotations

from docscrawl.discovery.traps import TrapGuard, url_pattern


def test_url_pattern() -> None:
    assert url_pattern("https://d.example/cal/2026/11/?view=day&a=1") == "/cal/{n}/{n}/?a&view"
    assert url_pattern("https://d.example/docs/intro.html") == "/docs/intro.html"


def test_calendar_is_capped_per_pattern() -> None:
    guard = TrapGuard(per_pattern=3)
    urls = [f"https://d.example/cal/2026/{m}/" for m in range(1, 6)]
    verdicts = [guard.admit(u) for u in urls]
    assert verdicts[:3] == [None, None, None]
    assert verdicts[3] == "more than 3 URLs match /cal/{n}/{n}/"
    assert guard.admit("https://d.example/docs/other.html") is None


def test_numbered_pages_get_ten_times_the_cap() -> None:
    guard = TrapGuard(per_pattern=3)
    verdicts = [guard.admit(f"https://d.example/docs/chapter-{n}.html") for n in range(31)]
    assert verdicts[:30] == [None] * 30
    assert verdicts[30] == "more than 30 URLs match /docs/chapter-{n}.html"


def test_query_space_is_capped_per_path() -> None:
    guard = TrapGuard(per_pattern=1000, per_path_queries=2)
    assert guard.admit("https://d.example/search?q=a") is None
    assert guard.admit("https://d.example/search?q=b&page=2") is None
    assert guard.admit("https://d.example/search?q=c") == "more than 2 query strings on /search"
    assert guard.admit("https://d.example/search") is None


def test_hash_routes_are_paths_not_query_strings() -> None:
    guard = TrapGuard(per_pattern=1000, per_path_queries=2)
    for n in range(10):
        assert guard.admit(f"https://d.example/docs/?_hashroute=/guide/page-{n}") is None
    assert url_pattern("https://d.example/docs/?_hashroute=/cal/2026&x=1") == "/docs/#/cal/{n}?x"


def test_urls_without_a_number_or_query_are_not_counted() -> None:
    """Their pattern is their own path: counting would keep one entry per URL of the site."""
    guard = TrapGuard(per_pattern=2)
    for n in ("alpha", "beta", "gamma", "delta"):
        assert guard.admit(f"https://d.example/docs/{n}.html") is None
    assert guard.patterns_counted == 0
    for n in range(20):
        assert guard.admit(f"https://d.example/docs/page{n}.html") is None
    assert guard.admit("https://d.example/docs/page20.html") is not None  # 10 x 2 for one number
    assert guard.patterns_counted == 1


def _calendar(guard: TrapGuard, months: int) -> list[str | None]:
    """An endless calendar: each month found on the month before (rolling into years)."""
    verdicts, source = [], "https://d.example/docs/cal/"
    for n in range(months):
        url = f"https://d.example/docs/cal/{2026 + n // 12}/{n % 12 + 1}/"
        verdicts.append(guard.admit(url, source))
        source = url
    return verdicts


def test_a_counting_chain_is_a_trap_long_before_the_pattern_cap() -> None:
    guard = TrapGuard(per_pattern=1000, per_chain=50)
    verdicts = _calendar(guard, 60)
    assert verdicts[:51] == [None] * 51  # the first month starts the chain at 0
    assert verdicts[51] == ("a chain of more than 50 URLs of /docs/cal/{n}/{n}/, each found "
                            "on the one before, its numbers counting")


def test_numbered_pages_listed_elsewhere_never_chain() -> None:
    """A book's chapters link the next one, and its table of contents lists them all."""
    guard = TrapGuard(per_pattern=1000, per_chain=5)
    toc = "https://d.example/book/index.html"
    for n in range(40):  # found on the table of contents first: chain 0
        assert guard.admit(f"https://d.example/book/chapter-{n}.html", toc) is None
    assert guard.admit("https://d.example/book/chapter-40.html",  # next link of the last
                       "https://d.example/book/chapter-39.html") is None
