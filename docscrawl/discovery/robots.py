"""robots.txt policy (RFC 9309) on top of Protego, reporting the deciding line.

Protego decides; this module only recovers the text of the rule that decided,
because `Protego.can_fetch` returns a bool and the crawl log needs the rule
(`Disallow: /private/`). Every reach into Protego's private structures is in
this module, and tests/discovery/test_robots.py checks that the recovered rule
agrees with Protego's answer.

Group selection follows RFC 9309 section 2.2.1: the group whose user-agent
equals our product token (case-insensitive), else the `*` group. Protego's own
`can_fetch(url, ua)` would also pick a group whose token is a prefix of ours
(`User-agent: docs` for `docscrawl`), which the RFC does not allow.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from protego import Protego
from protego._ruleset import _RuleSet
from protego._urlpattern import _URLPattern
from protego._utils import _quote_path

__all__ = ["MAX_ROBOTS_BYTES", "RobotsDecision", "RobotsPolicy"]

#: Parsing limit; RFC 9309 section 2.5 requires at least 500 KiB.
MAX_ROBOTS_BYTES = 512 * 1024

_FIELD_NAMES = {"allow": "Allow", "disallow": "Disallow"}


@dataclass(frozen=True)
class RobotsDecision:
    """Whether robots.txt lets us fetch a URL, and the line that decided (or None)."""

    allowed: bool
    rule: str | None


_ALLOW_ALL = RobotsDecision(allowed=True, rule=None)


class RobotsPolicy:
    """The robots.txt of one origin, as it applies to one user-agent token."""

    def __init__(
        self,
        state: str,
        *,
        parser: Protego | None = None,
        user_agent: str = "docscrawl",
        status: int | None = None,
    ) -> None:
        self._state = state
        self._parser = parser or Protego()
        self._group = _select_group(self._parser, user_agent)
        self._pattern_texts = _pattern_texts(self._parser)
        self._refusal = RobotsDecision(
            allowed=False,
            rule=f"robots.txt unreachable ({_describe_status(status)}): disallow all",
        )

    @classmethod
    def from_response(
        cls, status: int | None, body: bytes, *, user_agent: str = "docscrawl"
    ) -> RobotsPolicy:
        """Build the policy from the robots.txt fetch result (status None: no response).

        2xx: parse the body; 3xx/4xx: "missing", allow all; 5xx, None or any other
        status: "unreachable", disallow all (RFC 9309 section 2.3.1).
        """
        if status is not None and 200 <= status < 300:
            return cls("parsed", parser=_parse(body), user_agent=user_agent, status=status)
        if status is not None and 300 <= status < 500:
            return cls("missing", user_agent=user_agent, status=status)
        return cls("unreachable", user_agent=user_agent, status=status)

    @property
    def state(self) -> str:
        """`parsed`, `missing` (3xx/4xx: allow all) or `unreachable` (disallow all)."""
        return self._state

    @property
    def crawl_delay(self) -> float | None:
        """Crawl-delay of our group, in seconds, if any."""
        return self._group.crawl_delay if self._group is not None else None

    @property
    def sitemaps(self) -> list[str]:
        """`Sitemap:` URLs, as written, in file order."""
        return list(self._parser.sitemaps)

    def decide(self, url: str) -> RobotsDecision:
        """Return whether *url* may be fetched and the rule that decided."""
        if self._state == "missing" or urlsplit(url).path == "/robots.txt":
            return _ALLOW_ALL
        if self._state == "unreachable":
            return self._refusal
        if self._group is None:
            return _ALLOW_ALL
        allowed = self._group.can_fetch(url)
        rule = self._matching_rule(url)
        if rule is None or rule.startswith("Allow") != allowed:
            # Cannot happen while Protego matches as tested; never report a wrong line.
            rule = None if allowed else "Disallow: (rule text unavailable)"
        return RobotsDecision(allowed=allowed, rule=rule)

    def _matching_rule(self, url: str) -> str | None:
        """Text of the first matching rule in Protego's priority order, if any."""
        assert self._group is not None
        path = _quote_path(url)
        for rule in self._group._rules:
            if rule.value.match(path):
                return f"{_FIELD_NAMES[rule.field]}: {self._pattern_text(rule.value)}"
        return None

    def _pattern_text(self, pattern: _URLPattern) -> str:
        text = self._pattern_texts.get(pattern)
        if text is not None:
            return text
        # Protego adds "Allow: /dir/$" for every "Allow: /dir/index.html".
        if pattern._pattern.endswith("/$"):
            text = self._pattern_texts.get(pattern._pattern[:-1] + "index.html")
        return text if text is not None else pattern._pattern


def _parse(body: bytes) -> Protego:
    """Parse a robots.txt body; undecodable bytes are replaced, garbage yields no rules."""
    text = body[:MAX_ROBOTS_BYTES].decode("utf-8-sig", errors="replace")
    try:
        return Protego.parse(text)
    except Exception:  # a robots.txt must never stop the crawl: allow all instead
        return Protego()


def _select_group(parser: Protego, user_agent: str) -> _RuleSet | None:
    """The group for our product token, else `*`, else None (RFC 9309 section 2.2.1)."""
    groups = parser._user_agents
    group = groups.get(user_agent.strip().lower())
    return group if group is not None else groups.get("*")


def _pattern_texts(parser: Protego) -> dict[_URLPattern | str, str]:
    """Map Protego's pattern objects (and quoted pattern strings) to the values written.

    A value with `$` is stored twice: as given and with `$` escaped as `%24`;
    both report the value as written.
    """
    texts: dict[_URLPattern | str, str] = {}
    for value, pattern in parser._url_patterns.items():
        if pattern is not None:
            texts.setdefault(pattern, value)
            texts.setdefault(pattern._pattern, value)
    for value, pattern in parser._url_patterns.items():
        escaped = parser._url_patterns.get(value.replace("$", "%24"))
        if "$" in value and pattern is not None and escaped is not None:
            texts[escaped] = value
    return texts


def _describe_status(status: int | None) -> str:
    return "no response" if status is None else f"HTTP {status}"
