"""Site-level version evidence: a version signal every page of the scope shares.

A page alone may name its version nowhere the page-level rules read
(`docscrawl.extract.version`): a DocBook manual under `/docs/16/` (a bare number is not a
version in a URL) whose every page links home as "Product 16.2 Documentation"; a Javadoc
tree under `/product/17/docs/api/` whose every title ends "(Product 17 & Kit 17)". What
every page shares is evidence for every page:

* shared signals: a version number in the `<title>` (source `title`), or in the site's
  chrome (source `sidebar`): the text of links to the site's home page and short text
  named as a version (`[class*=version]`, `#projectnumber`, `.caption`). A number counts
  once `min_pages` pages were seen and at least `share` of them show it; numbers that
  disagree with each other cancel out (never a guess).
* the scope: a bare number or an underscore release (`/en/14/`, `/docs/16/`, `1_81_0`) in
  the crawl's start directory is on every page's URL; it is not a version alone (bare
  numbers are usually chapters or years) but becomes `url` evidence once a shared signal
  agrees with it (`16` ~ `16.2`; `14` ~ `1.4`, the slug of a release series).

A site signal is added to a page's evidence unless the page's own evidence disagrees
(another number, or an alias such as `next` that is not the default documentation): a
multi-version site keeps each page's own version. The object is fed each page
(`observe`), read with `apply`, and saved in the crawl state (`state`/`from_state`) so
resumed and incremental crawls start from what earlier runs learned.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit

from lxml import etree

from docscrawl.extract.model import ExtractionWarning, VersionEvidence, VersionInfo
from docscrawl.extract.version import (
    DEFAULT_ALIASES,
    IN_TEXT_RE,
    is_alias,
    numbers_agree,
    verdict,
)

__all__ = ["SiteVersions", "page_signals"]

MIN_PAGES = 3
SHARE = 0.8
MAX_TOKENS = 200  # distinct candidate numbers kept (the most frequent survive)
MAX_CHROME_CHARS = 120
SCOPE_NUMBER_RE = re.compile(r"^(?:\d+|\d+(?:_\d+)+)$")
# Short chrome text that names a version: class/id words, Doxygen's project number,
# Haddock's package caption ("base-4.15.1.0: Basic libraries").
_CHROME = etree.XPath(
    "//*[contains(@class, 'version') or contains(@id, 'version') or @id='projectnumber'"
    " or contains(concat(' ', normalize-space(@class), ' '), ' caption ')]"
    "[not(ancestor-or-self::pre)]"
)
_TITLE = etree.XPath("//head/title | //title")
_WORD_NUMBER = re.compile(r"(?<![\w.])(\d+)(?![\w.]\w)")


def _numbers(text: str) -> list[str]:
    """Version numbers written in short text (`2.8`, `v3`, `4.15.1.0`)."""
    return [m.group(1).replace(" ", "") for m in IN_TEXT_RE.finditer(text)]


def page_signals(root: etree._Element, home_texts: Iterable[str],
                 scope: Iterable[str] = ()) -> set[tuple[str, str]]:
    """(source, number) pairs a page shows where a site shows its version.

    `home_texts`: texts of the page's links to the site's home page (the caller has the
    page's resolved links); `scope`: bare numbers of the start directory, which also count
    when the title writes them bare ("(Product 17 & Kit 17)" under `/product/17/`)."""
    found: set[tuple[str, str]] = set()
    for title in _TITLE(root)[:1]:
        text = " ".join(title.itertext())
        found.update(("title", n) for n in _numbers(text))
        words = set(_WORD_NUMBER.findall(text))
        found.update(("title", n) for n in scope if n in words)
    for text in home_texts:
        if len(text) <= MAX_CHROME_CHARS:
            found.update(("sidebar", n) for n in _numbers(text))
    for el in _CHROME(root)[:10]:
        text = " ".join("".join(el.itertext()).split())
        if text and len(text) <= MAX_CHROME_CHARS:
            found.update(("sidebar", n) for n in _numbers(text))
    return found


def scope_numbers(site_url: str) -> list[str]:
    """Bare-number directory segments of the crawl's start directory (`/en/14/` -> 14)."""
    path = unquote(urlsplit(site_url).path)
    directories = path.split("/")[1:-1]
    return [s for s in directories if SCOPE_NUMBER_RE.match(s)]


def home_urls(site_url: str) -> frozenset[str]:
    """The site's home page URLs: the start directory and its index file."""
    parts = urlsplit(site_url)
    directory = parts.path.rsplit("/", 1)[0] + "/"
    base = f"{parts.scheme}://{parts.netloc}{directory}"
    return frozenset({base, base + "index.html", base + "index.htm"})


@dataclass(frozen=True, slots=True)
class SiteSignal:
    source: str
    value: str


class SiteVersions:
    """What the crawl learned about the site's version (bounded; see module docstring)."""

    def __init__(self, site_url: str, *, min_pages: int = MIN_PAGES,
                 share: float = SHARE) -> None:
        self.min_pages, self.share = min_pages, share
        self.scope = scope_numbers(site_url)
        self.home = home_urls(site_url)
        self.pages = 0
        self.counts: dict[tuple[str, str], int] = {}
        self._cached: list[VersionEvidence] | None = None

    def observe(self, signals: set[tuple[str, str]]) -> None:
        """Count one page's signals (each page once)."""
        self.pages += 1
        for key in signals:
            self.counts[key] = self.counts.get(key, 0) + 1
        if len(self.counts) > MAX_TOKENS:
            keep = sorted(self.counts.items(), key=lambda kv: -kv[1])[: MAX_TOKENS // 2]
            self.counts = dict(keep)
        self._cached = None

    def evidence(self) -> list[VersionEvidence]:
        """Site-level evidence every page gets (empty while nothing is shared enough)."""
        if self._cached is None:
            self._cached = self._evidence()
        return self._cached

    def _evidence(self) -> list[VersionEvidence]:
        if self.pages < self.min_pages:
            return []
        need = self.share * self.pages
        shared = [SiteSignal(s, v) for (s, v), n in self.counts.items() if n >= need]
        if not shared or any(not numbers_agree(a.value, b.value) for a in shared for b in shared):
            return []
        shared.sort(key=lambda sig: (sig.source != "title", -len(sig.value), sig.value))
        found = [VersionEvidence(sig.source, sig.value, site=True) for sig in shared]
        for number in self.scope:
            dotted = number.replace("_", ".")
            if all(numbers_agree(dotted, sig.value) for sig in shared):
                found.insert(0, VersionEvidence("url", number, site=True))
                break
        return found

    def apply(self, version: VersionInfo,
              warnings: list[ExtractionWarning]) -> tuple[VersionInfo, list[ExtractionWarning]]:
        """The page's version with the site's evidence added, unless the page disagrees."""
        site = self.evidence()
        if not site or version.status == "conflicting":
            return version, warnings
        own = version.evidence
        if any(not _compatible(e.value, s.value) for e in own for s in site):
            return version, warnings
        known = {(e.source, e.value) for e in own}
        added = [s for s in site if (s.source, s.value) not in known]
        if not added:
            return version, warnings
        merged = [*[s for s in added if s.source == "url"], *own,
                  *[s for s in added if s.source != "url"]]
        combined, extra = verdict(merged)
        kept = [w for w in warnings if w.code != "version_uncertain"]
        return combined, [*kept, *extra]

    # -- crawl state -------------------------------------------------------------------

    def state(self) -> dict[str, Any]:
        return {"pages": self.pages,
                "counts": [[s, v, n] for (s, v), n in self.counts.items()]}

    def restore(self, state: dict[str, Any]) -> None:
        """Continue from a saved state (bad or missing fields are ignored)."""
        try:
            pages = int(state.get("pages", 0))
            counts = {(str(s), str(v)): int(n) for s, v, n in state.get("counts", [])}
        except (TypeError, ValueError):
            return
        self.pages, self.counts, self._cached = pages, counts, None


def _compatible(page_value: str, site_value: str) -> bool:
    """A page's own evidence leaves room for the site's number: it agrees, or it is a
    default alias (`latest`, `stable`) that names no version of its own."""
    if is_alias(page_value):
        return page_value.casefold() in DEFAULT_ALIASES
    return numbers_agree(page_value, site_value)
