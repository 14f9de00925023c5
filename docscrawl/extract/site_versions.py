"""Site-level version evidence: a version signal every page of the scope shares.

A page alone may name its version nowhere the page-level rules read
(`docscrawl.extract.version`): a DocBook manual under `/docs/16/` (a bare number is not a
version in a URL) whose every page links home as "Product 16.2 Documentation"; a Javadoc
tree under `/product/17/docs/api/` whose every title ends "(Product 17 & Kit 17)". What
every page shares is evidence for every page:

* shared signals: a version number in the `<title>` (source `title`), or in the site's
  chrome (source `sidebar`): links to the site's home page (their text, their `title`
  attribute and the `alt` of a logo inside them: docbook-xsl's navheader links home as
  `<a accesskey="h" title="PostgreSQL 15.20 Documentation">Home</a>`), the `title` of a
  `<link rel="home|start|top">`, short text named as a version (`[class*=version]`,
  `#projectnumber`, `.caption`) or labelled as one ("Library Version: 4.8.3", not
  "API Version: 4.0"). A number
  counts once `min_pages` pages were seen and at least `share` of them show it, and keeps
  counting while half of them do; numbers that disagree with each other cancel out (never
  a guess; `docscrawl check`'s template version names what was shown). Each signal keeps
  where it was read (`VersionEvidence.where`): the evidence names its place in the template.
* the home page's label: the crawl's start page (the site's home, its title page) may
  label the release the whole site documents where no other page does: rustdoc's crate
  root (`<li class="version">Version 1.0.107</li>`), gtk-doc's book title page
  (`<p class="releaseinfo">for GLib 2.74.6 ...`, DocBook's release info). A version label
  read on a home page (`home_urls`) is site evidence at once, `where` "home page ...",
  when no signal is shared by the pages (a shared one is what the template states).
* the scope: a bare number or an underscore release (`/en/14/`, `/docs/16/`, `1_81_0`) in
  the crawl's start directory is on every page's URL; it is not a version alone (bare
  numbers are usually chapters or years) but becomes `url` evidence once a shared signal
  agrees with it (`16` ~ `16.2`; `14` ~ `1.4`, the slug of a release series).

A site signal is added to a page's evidence unless the page's own evidence disagrees
(another number, or any alias: `latest` is often the development version): a multi-version
site keeps each page's own version. The object is fed each page
(`observe`), read with `apply`, and saved in the crawl state (`state`/`from_state`) so
resumed and incremental crawls start from what earlier runs learned.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any
from urllib.parse import unquote, urljoin, urlsplit

from lxml import etree

from docscrawl.extract.model import ExtractionWarning, VersionEvidence, VersionInfo
from docscrawl.extract.prose_version import front_matter_versions
from docscrawl.extract.version import numbers_agree, verdict
from docscrawl.extract.version_token import IN_TEXT_RE, is_alias

__all__ = ["SiteSignal", "SiteVersions", "home_link_texts", "page_signals"]

MIN_PAGES = 3
SHARE = 0.8
KEEP_SHARE = 0.5  # a signal once shared stays while this share of pages still shows it
# Pages read for signals: every page until FULL_PAGES were read, then one in SAMPLE_EVERY
# (a signal every page shares shows in a sample as well; reading costs a tree walk).
FULL_PAGES = 20
SAMPLE_EVERY = 10
MAX_TOKENS = 200  # distinct candidate numbers kept (the most frequent survive)
MAX_CHROME_CHARS = 120
SCOPE_NUMBER_RE = re.compile(r"^(?:\d+|\d+(?:_\d+)+)$")
# Short chrome text that names a version: class/id words, Doxygen's project number,
# Haddock's package caption ("base-4.15.1.0: Basic libraries"). Looked up from the page's
# class tokens and ids (`DocIndex`), so a page without such a name costs no tree walk.
CHROME_WORDS = ("version", "projectnumber")
CHROME_CLASSES = frozenset({"caption", "releaseinfo"})  # DocBook's title page release info
# Notes inside the content that name the version a feature changed in (Sphinx
# `versionadded`...): not the version of the documentation.
VERSION_NOTES = ("versionadded", "versionchanged", "versionmodified", "deprecated")
MAX_CHROME_CHILDREN = 8  # larger elements (a whole page whose class says "version") are skipped


@lru_cache(maxsize=256)
def _chrome_query(classes: tuple[str, ...], ids: tuple[str, ...]) -> etree.XPath:
    tests = [f"contains(@class, '{c}')" for c in classes]
    tests += [f"@id='{i}'" for i in ids]
    return etree.XPath(f"//*[{' or '.join(tests)}]")


def _chrome(root: etree._Element, classes: Iterable[str], ids: Iterable[str]
            ) -> list[etree._Element]:
    named_classes = tuple(sorted(c for c in classes if "'" not in c and (
        c in CHROME_CLASSES or _names_version(c))
        and not c.lower().startswith(VERSION_NOTES)))
    named_ids = tuple(sorted(i for i in ids if "'" not in i and _names_version(i)))
    if not named_classes and not named_ids:
        return []
    wanted = set(named_classes)
    return [el for el in _chrome_query(named_classes, named_ids)(root)
            if el.get("id") in named_ids or wanted & set((el.get("class") or "").split())]


def _names_version(name: str) -> bool:
    """A class or id that names a version: a short name (`version`, `rtd-version`,
    `mdVersion`, `projectnumber`) with the word at a word start. Not a heading's slug
    (Texinfo's `toc-How-can-I-get-...-outdated-versions-of-R` on "7.44 How can I...")
    nor a word that merely contains it (`Linear-equations-and-inversion-1`)."""
    if len(_NAME_PARTS.split(name)) > MAX_NAME_PARTS:
        return False
    return any(_CHROME_WORD_RES[w].search(name) for w in CHROME_WORDS)


MAX_NAME_PARTS = 4
_NAME_PARTS = re.compile(r"[-_:.]+")
_CHROME_WORD_RES = {w: re.compile(rf"(?<![a-z]){w}|{w.capitalize()}") for w in CHROME_WORDS}


def _first_title(root: etree._Element) -> list[etree._Element]:
    """The document's `<title>` (the walk stops at the first one, in the head)."""
    title = next(root.iter("title"), None)
    return [] if title is None else [title]
_WORD_NUMBER = re.compile(r"(?<![\w.])(\d+)(?![\w.]\w)")


def _numbers(text: str) -> list[str]:
    """Version numbers written in short text (`2.8`, `v3`, `4.15.1.0`)."""
    return [m.group(1).replace(" ", "") for m in IN_TEXT_RE.finditer(text)]


Signal = tuple[str, str, str]  # (source, number, where)
HOME_RELS = frozenset({"home", "start", "top"})
_TITLED_LINKS = etree.XPath("//a[@href][@title or .//img[@alt]]")
_HEAD_LINKS = etree.XPath("//head/link[@rel][@title]")


def home_link_texts(root: etree._Element, base_url: str, home: frozenset[str]
                    ) -> list[tuple[str, str]]:
    """(where, text) of what links to the site's home page say besides their text: the
    `title` attribute and a logo's `alt` (only links carrying one are looked at), and the
    `title` of `<link rel="home|start|top">` in the head."""
    found: list[tuple[str, str]] = []
    for a in _TITLED_LINKS(root):
        href = (a.get("href") or "").split("#", 1)[0]
        if href and urljoin(base_url, href) in home:
            if title := a.get("title"):
                found.append(("home link title", title))
            found.extend(("home logo alt", alt) for alt in a.xpath(".//img/@alt") if alt)
    for link in _HEAD_LINKS(root):
        if HOME_RELS & set((link.get("rel") or "").lower().split()):
            found.append(("head link title", link.get("title") or ""))
    return found


_VERSION_TEXT = etree.XPath("//body//text()[contains(translate(., 'VERSION', 'version'),"
                            " 'version')]")
# A short text labelled as a version: "Version: 2.1", "Library Version: 4.8.3" (gi-docgen's
# namespace box). Not "New in version 3.2:" (Sphinx notes name when a feature came), nor an
# interface's version ("API Version: 4.0", the GIR namespace Gsk-4.0; an ABI version): that
# names the interface a release implements, not the release documented.
LABEL_RE = re.compile(r"^((?:[\w.-]+\s+){0,2})version\s*:\s*(v?\d[\w.\-]*)$", re.IGNORECASE)
INTERFACE_WORDS = frozenset({"api", "abi"})
MAX_LABELS = 20  # text nodes naming "version" read per page


def _version_labels(root: etree._Element) -> list[str]:
    """Texts of short elements that label a version, wherever the page shows them."""
    out = []
    for node in _VERSION_TEXT(root)[:MAX_LABELS]:
        parent = node.getparent()
        if parent is None or len(parent) > 2:
            continue
        text = " ".join("".join(parent.itertext()).split())
        match = LABEL_RE.match(text) if len(text) <= MAX_LABEL_CHARS else None
        if match and not INTERFACE_WORDS & set(match.group(1).lower().split()):
            out.append(text)
    return out


MAX_LABEL_CHARS = 60
FRONT_MATTER = "front matter sentence"
HOME_WHERES = frozenset({"version label", FRONT_MATTER})  # what a home page says for the site


def page_signals(root: etree._Element, home_texts: Iterable[str],
                 scope: Iterable[str] = (), *, classes: Iterable[str] = (),
                 ids: Iterable[str] = (), home_attributes: Iterable[tuple[str, str]] = (),
                 front_matter: bool = False) -> set[Signal]:
    """(source, number, where) of what a page shows where a site shows its version.

    `home_texts`: texts of the page's links to the site's home page (the caller has the
    page's resolved links); `home_attributes`: (where, text) pairs of `home_link_texts`;
    `scope`: bare numbers of the start directory, which also count when the title writes
    them bare ("(Product 17 & Kit 17)" under `/product/17/`); `classes`, `ids`: the page's
    class tokens and ids (`DocIndex`); `front_matter`: also read the release the page's
    front matter states in prose (`docscrawl.extract.prose_version`; the start page's)."""
    found: set[Signal] = set()
    if front_matter:
        found.update(("banner", n, FRONT_MATTER) for n in front_matter_versions(root))
    for title in _first_title(root):
        text = " ".join(title.itertext())
        found.update(("title", n, "page title") for n in _numbers(text))
        words = set(_WORD_NUMBER.findall(text))
        found.update(("title", n, "page title") for n in scope if n in words)
    chrome = [*(("home link text", t) for t in home_texts), *home_attributes]
    for where, text in chrome:
        if len(text) <= MAX_CHROME_CHARS:
            found.update(("sidebar", n, where) for n in _numbers(text))
    for text in _version_labels(root):
        found.update(("sidebar", n, "version label") for n in _numbers(text))
    for el in _chrome(root, classes, ids)[:10]:
        if el.tag in ("html", "body") or len(el) > MAX_CHROME_CHILDREN:
            continue
        text = " ".join("".join(el.itertext()).split())
        if len(text) > MAX_CHROME_CHARS:  # a release info's sentence: its leading words
            text = " ".join((el.text or "").split())
        if text and len(text) <= MAX_CHROME_CHARS:
            found.update(("sidebar", n, "version label") for n in _numbers(text))
    return found


def scope_numbers(site_url: str) -> list[str]:
    """Bare-number directory segments of the crawl's start directory (`/en/14/` -> 14)."""
    path = unquote(urlsplit(site_url).path)
    directories = path.split("/")[1:-1]
    return [s for s in directories if SCOPE_NUMBER_RE.match(s)]


def home_urls(site_url: str) -> frozenset[str]:
    """The site's home page URLs: the start page itself (a manual's first file,
    `R-intro.html`), the start directory and its index file."""
    parts = urlsplit(site_url)
    directory = parts.path.rsplit("/", 1)[0] + "/"
    base = f"{parts.scheme}://{parts.netloc}{directory}"
    start = f"{parts.scheme}://{parts.netloc}{parts.path}"
    return frozenset({start, base, base + "index.html", base + "index.htm"})


@dataclass(frozen=True, slots=True)
class SiteSignal:
    source: str
    value: str
    where: str


class SiteVersions:
    """What the crawl learned about the site's version (bounded; see module docstring)."""

    def __init__(self, site_url: str, *, min_pages: int = MIN_PAGES,
                 share: float = SHARE) -> None:
        self.min_pages, self.share = min_pages, share
        self.scope = scope_numbers(site_url)
        self.home = home_urls(site_url)
        self.pages = 0
        self.counts: dict[Signal, int] = {}
        self.established: set[Signal] = set()  # signals that were shared enough
        self.home_labels: set[Signal] = set()  # version labels read on a home page
        self._cached: list[VersionEvidence] | None = None
        self.offered = 0  # pages offered to `wants`

    def wants(self, url: str) -> bool:
        """Whether to read the signals of the page at `url` (all early pages, then a
        sample; always the site's home page, whose version label speaks for the site).
        Asked once a page: each call counts one page offered."""
        self.offered += 1
        return self.pages < FULL_PAGES or self.offered % SAMPLE_EVERY == 0 or url in self.home

    def observe(self, signals: set[Signal], *, home: bool = False) -> None:
        """Count one page's signals (each page read once; see `wants`). `home`: the
        page is the site's home page (`home_urls`), whose version labels speak for the
        site."""
        if home:
            self.home_labels |= {(source, value, f"home page {where}")
                                 for source, value, where in signals if where in HOME_WHERES}
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

    def shown(self) -> list[tuple[SiteSignal, int]]:
        """Signals most pages show (shared enough to count), whether or not they agree
        with each other, with the pages that show each: what the template states."""
        if self.pages < self.min_pages:
            return []
        need, keep = self.share * self.pages, KEEP_SHARE * self.pages
        for key, n in self.counts.items():
            if n >= need:
                self.established.add(key)
        return [(SiteSignal(*key), n) for key, n in self.counts.items()
                if n >= need or (key in self.established and n >= keep)]

    def _evidence(self) -> list[VersionEvidence]:
        # Pages that do not show the signal (source listings, an index) may follow a run
        # of pages that do: a signal once shared stays while half the pages show it.
        shared = [signal for signal, _ in self.shown()]
        if not shared:  # the home page's label speaks only where nothing else does
            shared = [SiteSignal(*key) for key in sorted(self.home_labels)]
        if not shared or any(not numbers_agree(a.value, b.value) for a in shared for b in shared):
            return []
        shared.sort(key=lambda sig: (sig.source != "title", -len(sig.value), sig.value,
                                     sig.where))
        found = [VersionEvidence(sig.source, sig.value, site=True, where=sig.where or None)
                 for sig in shared]
        for number in self.scope:
            dotted = number.replace("_", ".")
            if all(numbers_agree(dotted, sig.value) for sig in shared):
                found.insert(0, VersionEvidence("url", number, site=True,
                                                where="start directory"))
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
        known = {(e.source, e.value, e.where) for e in own}
        added = [s for s in site if (s.source, s.value, s.where) not in known]
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
                "counts": [[s, v, n, w] for (s, v, w), n in self.counts.items()],
                "established": [[s, v, w] for s, v, w in sorted(self.established)],
                "home": [[s, v, w] for s, v, w in sorted(self.home_labels)]}

    def restore(self, state: dict[str, Any]) -> None:
        """Continue from a saved state (bad or missing fields are ignored; a state saved
        before signals kept their place reads as `where` unknown)."""
        try:
            pages = int(state.get("pages", 0))
            counts = {(str(s), str(v), str(rest[0]) if rest else ""): int(n)
                      for s, v, n, *rest in state.get("counts", [])}
            established = {(str(s), str(v), str(rest[0]) if rest else "")
                           for s, v, *rest in state.get("established", [])}
            home = {(str(s), str(v), str(w)) for s, v, w in state.get("home", [])}
        except (TypeError, ValueError):
            return
        self.pages, self.counts, self._cached = pages, counts, None
        self.established, self.home_labels = established, home


def _compatible(page_value: str, site_value: str) -> bool:
    """A page's own evidence leaves room for the site's number when it agrees with it; an
    alias never does (`latest` is often the development version, not the release most
    pages name)."""
    if is_alias(page_value):
        return False
    return numbers_agree(page_value, site_value)
