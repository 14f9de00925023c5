"""Crawl scope: the default prefix of the site plus `allow` / `deny` regexes.

Rules, in order (CONTRACT, "Invocation"):

1. a `deny` regex found in the URL refuses it (`denied_by_rule`); deny always wins;
2. with `allow` regexes, a match accepts the URL even outside the default scope
   (allow widens); no match refuses it, as `out_of_scope` outside the default
   scope and `not_allowed_by_rule` inside it (allow narrows);
3. without `allow`, the default scope decides (`out_of_scope`).

A URL that is not http(s) with a host is `out_of_scope` unless denied.

Regexes are `search()`ed on the URL as given (fragment dropped) and on its
normalized form, so a rule written against either spelling works. The default
scope compares normalized URLs.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from docscrawl.discovery.urls import is_crawlable_url, normalize_url, strip_fragment
from docscrawl.vocab import SkipReason

__all__ = ["Scope", "ScopeDecision", "scope_prefix"]


@dataclass(frozen=True)
class ScopeDecision:
    """Whether a URL is in scope; on refusal, the skip `reason` and the `rule` text."""

    allowed: bool
    reason: str | None
    rule: str | None


_ALLOWED = ScopeDecision(allowed=True, reason=None, rule=None)


def scope_prefix(site: str) -> str:
    """Return the default-scope prefix of *site*: its normalized URL up to the path's
    last `/` (`https://d.example/docs/index.html` -> `https://d.example/docs/`).

    Raises ValueError when *site* is not an http(s) URL with a host.
    """
    if not is_crawlable_url(site):
        raise ValueError(f"site is not an http(s) URL with a host: {site!r}")
    normalized = normalize_url(site)
    parts = urlsplit(normalized)
    directory = parts.path[: parts.path.rfind("/") + 1]
    return f"{parts.scheme}://{parts.netloc}{directory}"


class Scope:
    """Decide whether a URL belongs to the crawl of one site."""

    def __init__(
        self,
        site: str,
        *,
        allow: Sequence[re.Pattern[str]] = (),
        deny: Sequence[re.Pattern[str]] = (),
    ) -> None:
        self._prefix = scope_prefix(site)
        self._allow = tuple(allow)
        self._deny = tuple(deny)
        self._allow_rule = ",".join(pattern.pattern for pattern in self._allow)
        self._out_of_scope = ScopeDecision(
            allowed=False, reason=SkipReason.OUT_OF_SCOPE, rule=f"scope: {self._prefix}"
        )

    @property
    def prefix(self) -> str:
        """The default-scope prefix URL (scheme, host, port and directory)."""
        return self._prefix

    def in_default_scope(self, url: str) -> bool:
        """Return True when *url* is under the default-scope prefix."""
        return self._in_default(self._forms(url)[1])

    def decide(self, url: str) -> ScopeDecision:
        """Return the scope decision for *url* (see the module docstring)."""
        forms = self._forms(url)
        denied = _first_match(self._deny, forms)
        if denied is not None:
            return ScopeDecision(allowed=False, reason=SkipReason.DENIED_BY_RULE, rule=denied)
        if forms[1] is None:  # not an http(s) URL: nothing can widen to it
            return self._out_of_scope
        inside = self._in_default(forms[1])
        if self._allow:
            allowed = _first_match(self._allow, forms)
            if allowed is not None:
                return ScopeDecision(allowed=True, reason=None, rule=allowed)
            if inside:
                return ScopeDecision(
                    allowed=False, reason=SkipReason.NOT_ALLOWED_BY_RULE, rule=self._allow_rule
                )
        if inside:
            return _ALLOWED
        return self._out_of_scope

    def _forms(self, url: str) -> tuple[str, str | None]:
        """Return *url* without fragment and its normalized form (None if not http(s))."""
        raw = strip_fragment(url.strip())
        return raw, (normalize_url(raw) if is_crawlable_url(raw) else None)

    def _in_default(self, normalized: str | None) -> bool:
        return normalized is not None and normalized.startswith(self._prefix)


def _first_match(patterns: Sequence[re.Pattern[str]], forms: tuple[str, str | None]) -> str | None:
    """Return the text of the first pattern found in any form of the URL."""
    for pattern in patterns:
        if any(form is not None and pattern.search(form) for form in forms):
            return pattern.pattern
    return None
