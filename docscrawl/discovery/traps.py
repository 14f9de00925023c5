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
"""

from __future__ import annotations

import re
from collections import Counter
from urllib.parse import parse_qsl, urlsplit

_DIGITS = re.compile(r"\d+")


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

    def __init__(self, *, per_pattern: int = 1000, per_path_queries: int = 100) -> None:
        self.per_pattern = per_pattern
        self.per_path_queries = per_path_queries
        self._patterns: Counter[str] = Counter()
        self._queries: Counter[str] = Counter()

    @property
    def patterns_counted(self) -> int:
        """How many patterns have a count (memory grows with this, not with URLs)."""
        return len(self._patterns)

    def admit(self, url: str) -> str | None:
        """Count `url` and return None, or return the rule that refuses it."""
        parts = urlsplit(url)
        pattern = url_pattern(url)
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
        return None
