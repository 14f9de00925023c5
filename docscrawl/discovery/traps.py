"""Crawler-trap caps: infinite calendars and query-parameter spaces.

A URL's *pattern* is its path with every run of digits replaced by `{n}`, plus the sorted
names of its query parameters (values dropped): `/cal/2026/11/?view=day` becomes
`/cal/{n}/{n}/?view`. At most `per_pattern` URLs of one pattern are fetched (ten times as
many when the pattern has a single number and no query, like `/docs/chapter-{n}.html`:
numbered pages are common in real documentation, endless calendars need two), and at most
`per_path_queries` distinct query strings of one path; the rest are `skipped` with reason
`trap` and a rule naming the pattern. Hash routes (`?_hashroute=/guide/x`) count as paths,
not as query strings. Memory grows with the number of patterns with a number or a query,
not URLs.

An endless calendar or counter (`/cal/2026/12/` links `/cal/2027/1/`, which links the
next month...) is stopped sooner by its *counting chain*: a URL first found on a page of
its own pattern with other numbers continues that page's chain; past `per_chain` links in
one chain it is a trap. Pages a site lists elsewhere (a sidebar, an index) start at 0, so
the numbered chapters of a real book never chain far. The chain lengths of the last
CHAINS_KEPT such URLs are kept (a chain grows from the URL found just before).
"""

from __future__ import annotations

import re
from collections import Counter
from urllib.parse import parse_qsl, urlsplit

_DIGITS = re.compile(r"\d+")
CHAINS_KEPT = 10_000


HASH_ROUTE_PARAM = "_hashroute"  # docscrawl.discovery.hashroutes: a client-side route


def url_pattern(url: str) -> str:
    """The trap pattern of a URL (see module docstring); a hash route counts as a path."""
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    route = next((value for name, value in query if name == HASH_ROUTE_PARAM), None)
    path = _DIGITS.sub("{n}", parts.path + ("#" + route if route is not None else ""))
    names = sorted({name for name, _ in query if name != HASH_ROUTE_PARAM})
    return f"{path}?{'&'.join(names)}" if names else path


class TrapGuard:
    """Counts admitted URLs per pattern and per path; refuses past the caps."""

    def __init__(self, *, per_pattern: int = 1000, per_path_queries: int = 100,
                 per_chain: int = 200) -> None:
        self.per_pattern = per_pattern
        self.per_path_queries = per_path_queries
        self.per_chain = per_chain
        self._patterns: Counter[str] = Counter()
        self._queries: Counter[str] = Counter()
        self._chains: dict[str, int] = {}  # URL -> length of the counting chain it ends
        self._source: tuple[str, str] = ("", "")  # the last source URL and its pattern

    @property
    def patterns_counted(self) -> int:
        """How many patterns have a count (memory grows with this, not with URLs)."""
        return len(self._patterns)

    def admit(self, url: str, source: str | None = None) -> str | None:
        """Count `url` (found on `source`) and return None, or return the rule that
        refuses it."""
        parts = urlsplit(url)
        pattern = url_pattern(url)
        chain = self._chain(url, pattern, source) if "{n}" in pattern else 0
        if chain > self.per_chain:
            return (f"a chain of more than {self.per_chain} URLs of {pattern}, each found "
                    "on the one before, its numbers counting")
        limit = self.per_pattern
        if pattern.count("{n}") < 2 and "?" not in pattern:
            limit *= 10
        if self._patterns[pattern] >= limit:
            return f"more than {limit} URLs match {pattern}"
        counted_query = parts.query and HASH_ROUTE_PARAM not in parts.query
        if counted_query and self._queries[parts.path] >= self.per_path_queries:
            return f"more than {self.per_path_queries} query strings on {parts.path}"
        if "{n}" in pattern or "?" in pattern:  # else the pattern is this one URL's path:
            self._patterns[pattern] += 1  # counting it would keep one entry per URL
        if counted_query:
            self._queries[parts.path] += 1
        if chain:
            chains = self._chains
            if len(chains) >= CHAINS_KEPT:
                del chains[next(iter(chains))]
            chains[url] = chain
        return None

    def _chain(self, url: str, pattern: str, source: str | None) -> int:
        """The counting-chain length `url` would have: 0 unless its source has the same
        pattern and other numbers."""
        if not source:
            return 0
        if self._source[0] != source:  # a page's links come one after the other
            self._source = (source, url_pattern(source))
        if self._source[1] != pattern or _DIGITS.findall(url) == _DIGITS.findall(source):
            return 0
        return self._chains.get(source, 0) + 1
