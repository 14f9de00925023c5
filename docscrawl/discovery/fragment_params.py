"""Query parameters that act as fragments on this site: learned per crawl, used before fetching.

Docsify links every heading as `page?id=heading-slug`; a Sphinx search result links
`page.html?highlight=word`. Each variant serves the page it names, so fetching (and on a
client-rendered site, rendering) each one costs a request and a browser page for nothing.
A parameter is treated as a fragment when

* the generator of the site's pages is known to use it for in-page anchors
  (`ANCHOR_PARAMS`: Docsify's `id`), or
* its variants keep producing the same content: `LEARN_AFTER` distinct values of it were
  merged as `same_content` with a URL that differs only by that parameter.

From then on a discovered URL is identified without it (`identify`): its later variants are
skipped as `duplicate_url` of the page before any fetch or render, and the crawl log names
the rule (`param_rule`). What was learned is kept in the crawl state, so resumed and
incremental crawls skip the variants from their first page.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

__all__ = ["ANCHOR_PARAMS", "FragmentParams"]

# Generators known to put in-page anchors in a query parameter.
ANCHOR_PARAMS: dict[str, tuple[str, ...]] = {"docsify": ("id",)}
LEARN_AFTER = 2
MAX_VALUES = 8  # values remembered per parameter while learning
MAX_PARAMS = 64  # parameters followed while learning


class FragmentParams:
    """Fragment-like query parameters of one site (small: a few names and values)."""

    def __init__(self) -> None:
        self.rules: dict[str, str] = {}  # parameter -> why it is a fragment
        self._values: dict[str, set[str]] = {}

    def learn_generator(self, generator: str | None) -> None:
        """A page of the site was built by `generator`."""
        for name in ANCHOR_PARAMS.get(generator or "", ()):
            self.rules.setdefault(name, f"query parameter {name} is an in-page anchor of "
                                        f"{generator}")

    def learn_duplicate(self, url: str, duplicate_of: str) -> None:
        """`url` served the same content as `duplicate_of`: a parameter they differ by
        alone may be a fragment."""
        name_value = _differing_param(url, duplicate_of)
        if name_value is None or name_value[0] in self.rules:
            return
        name, value = name_value
        if name not in self._values and len(self._values) >= MAX_PARAMS:
            return
        values = self._values.setdefault(name, set())
        if len(values) < MAX_VALUES:
            values.add(value)
        if len(values) >= LEARN_AFTER:
            self.rules[name] = (f"query parameter {name}: {len(values)} values served the "
                                "same content")
            del self._values[name]

    def identify(self, url: str) -> tuple[str, str | None]:
        """`url` without its fragment-like parameters, and the rule that removed one."""
        if not self.rules:
            return url, None
        parts = urlsplit(url)
        if not parts.query:
            return url, None
        pairs = parse_qsl(parts.query, keep_blank_values=True)
        kept = [(k, v) for k, v in pairs if k not in self.rules]
        if len(kept) == len(pairs):
            return url, None
        removed = next(k for k, _ in pairs if k in self.rules)
        return urlunsplit(parts._replace(query=urlencode(kept))), self.rules[removed]

    # -- crawl state -------------------------------------------------------------------

    def state(self) -> dict[str, Any]:
        return {"rules": dict(self.rules)}

    def restore(self, state: dict[str, Any]) -> None:
        rules = state.get("rules")
        if isinstance(rules, dict):
            self.rules.update({str(k): str(v) for k, v in rules.items()})


def _differing_param(a: str, b: str) -> tuple[str, str] | None:
    """The one query parameter two URLs of the same path differ by, with a value."""
    pa, pb = urlsplit(a), urlsplit(b)
    if (pa.scheme, pa.netloc, pa.path) != (pb.scheme, pb.netloc, pb.path):
        return None
    qa = dict(parse_qsl(pa.query, keep_blank_values=True))
    qb = dict(parse_qsl(pb.query, keep_blank_values=True))
    names = {k for k in qa.keys() | qb.keys() if qa.get(k) != qb.get(k)}
    if len(names) != 1:
        return None
    name = names.pop()
    return name, qa.get(name) or qb.get(name) or ""
