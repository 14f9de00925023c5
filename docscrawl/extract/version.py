"""Documentation version: evidence from several page signals, then one verdict.

Evidence (contract vocabulary, in precedence order): ``url``, ``canonical``,
``selector``, ``banner``, ``meta``, ``sidebar``, ``title``. Each value is the version
token as written on the page (``v2``, ``2.8``, ``7.2.x``, ``latest``).

What counts as a version token
  * numbers: ``v2``, ``V3``, ``2.8``, ``2.8.0``, ``7.2.x``, ``2.x``, ``2.0.0rc1``,
    ``v1.2-beta``. A bare integer (``2``, ``2024``) only counts with a ``v`` prefix,
    because bare integers in paths are usually pages, years or chapters.
  * aliases (``ALIASES``): ``latest``, ``stable``, ``dev``, ``main``, ``master``,
    ``next``, ``current``, ``nightly``... Recorded as evidence, but an alias never
    agrees or conflicts with a number.
  * In URLs only *directory* segments count (not the last one, which names the page),
    and only the first matching segment per URL.

Agreement rule: two numbers agree when, after dropping a ``v`` prefix and a trailing
``.x``, the shorter one's dotted parts are a prefix of the longer one's, i.e. one names
the release series the other belongs to (``2.8`` == ``2.8.0`` == ``2.8.1`` ==
``2.8.x``; ``v2`` == ``2.3``; ``2.8`` != ``2.9``; ``3.0`` != ``3.10``). Pre-release
suffixes must be equal when both carry one.

Status:
  * ``unversioned``: no evidence; value None.
  * ``conflicting``: two numbers disagree; value **None** (never guess) and a
    ``version_conflict`` warning listing every piece of evidence.
  * ``consistent``: numbers from at least two different sources, all agreeing; or,
    with no numbers, the same alias from at least two sources.
  * ``inferred``: anything else (one source; or only aliases that differ, which also
    adds a ``version_uncertain`` warning).
The value is the token of the highest-precedence source among the numbers (else
among the aliases), as written.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from typing import Any, TypeAlias

from lxml import etree

from docscrawl.extract.breadcrumbs import DocIndex, visible_text
from docscrawl.extract.md_text import collapse
from docscrawl.extract.model import ExtractionWarning, VersionEvidence, VersionInfo
from docscrawl.extract.version_token import (
    ALIASES,
    IN_TEXT_RE,
    as_token,
    is_alias,
    url_version,
    version_key,
    version_parts,
    versions_agree,
)

__all__ = [
    "detect_version",
    "evidence_of",
    "numbers_agree",
    "page_version_key",
    "verdict",
]

Element: TypeAlias = etree._Element

RTD_FLYOUT_RE = re.compile(r"\bv:\s*([\w.\-]+)")  # "Read the Docs v: latest"
SOURCES = ("url", "canonical", "selector", "banner", "meta", "sidebar", "title")

# Version switchers: text of the current choice.
SELECTORS: tuple[str, ...] = (
    ".rst-versions .rst-current-version",  # Read the Docs flyout ("v: 2.8")
    "select#version option[selected], select[name=version] option[selected]",
    "select#version-select option[selected], select.version-select option[selected]",
    ".md-version__current",  # mkdocs-material + mike
    "button.version-switcher__button",  # pydata-sphinx-theme
    ".navbar__item.dropdown > a.navbar__link",  # Docusaurus docsVersionDropdown
    ".VPNavBarMenuGroup button .text",  # VitePress version menu
    "[data-version-switcher] .current, .version-switcher .current",
    ".page-versions .version-menu-toggle",  # Antora
)
# Version banners ("this is documentation for an old version"), then the phrases
# whose group 1 is the version the page documents.
BANNERS: tuple[str, ...] = (
    ".theme-doc-version-banner, .theme-doc-version-badge",  # Docusaurus
    ".version-banner, .version-warning, #version-warning, .outdated-banner",
    ".admonition.version-warning, .bd-header-version-warning",
)
BANNER_PHRASES: tuple[re.Pattern[str], ...] = (
    re.compile(r"documentation for (?:\S+ ){0,3}?(?:version )?(v?\d[\w.\-]*)", re.IGNORECASE),
    re.compile(
        r"viewing (?:the )?(?:docs|documentation) (?:for )?(?:version )?(v?\d[\w.\-]*)",
        re.IGNORECASE,
    ),
    re.compile(r"\bversion:?\s+(v?\d[\w.\-]*)", re.IGNORECASE),
)
# <meta name=...> carrying a version.
META_NAMES = ("docsearch:version", "version", "docs:version", "docversion")
DOC_OPTIONS_RE = re.compile(r"""\bVERSION\s*:\s*['"]([^'"]+)['"]""")
# Static version text in a sidebar.
SIDEBARS: tuple[str, ...] = (
    ".wy-side-nav-search .version, .wy-side-nav-search > div.version",
    ".sphinxsidebar .version, .sphinxsidebar p.version",
    ".sidebar-version, .sidebar .version-label, .bd-sidebar-primary .version",
    ".nav-panel-explore .context .version",  # Antora
)
# <title> patterns: "Scrapy 2.8.0 documentation", "Flask Documentation (2.2.x)".
TITLE_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(r"\b(?:documentation|docs|manual)\s*\(\s*(v?\d[\w.\-]*)\s*\)", re.IGNORECASE),
    re.compile(
        r"(?<![\w.])(v?\d+(?:\.\d+)*(?:\.x)?)\s+(?:documentation|docs|manual|reference"
        r"|user guide)\b",
        re.IGNORECASE,
    ),
    re.compile(
        r"\b(?:documentation|docs)\s+(?:for\s+)?(?:version\s+|v)(\d[\w.\-]*)", re.IGNORECASE
    ),
)


def _token_in(text: str) -> str | None:
    """First version token in short free text ("v: 2.8", "v2.1 (stable)", "Next")."""
    text = collapse(text)
    if (match := RTD_FLYOUT_RE.search(text)) and (token := as_token(match.group(1))):
        return token
    if match := IN_TEXT_RE.search(text):
        return match.group(1).replace(" ", "")
    if token := as_token(text.split("(")[0]):
        return token
    words = [w.casefold().strip(":,()") for w in text.split()]
    alias = next((w for w in words if w in ALIASES), None)
    return alias if alias and len(words) <= 3 else None


def _first(index: DocIndex, selectors: tuple[str, ...]) -> Iterator[Element]:
    for selector in selectors:
        yield from index.select(selector)


def _from_selector(index: DocIndex, selectors: tuple[str, ...] = ()) -> list[str]:
    for el in _first(index, (*selectors, *SELECTORS)):
        if token := _token_in(visible_text(el)):
            return [token]
    return []


def _from_banner(index: DocIndex) -> list[str]:
    for el in _first(index, BANNERS):
        text = visible_text(el)
        for phrase in BANNER_PHRASES:
            match = phrase.search(text)
            if match and (token := as_token(match.group(1).rstrip(".,;"))):
                return [token]
    return []


def _from_meta(index: DocIndex) -> list[str]:
    """`<meta name=...version>`, Sphinx `documentation_options` (attribute or inline JS)."""
    found: list[str] = []
    for meta in index.root.iter("meta"):
        if (meta.get("name") or "").casefold() in META_NAMES:
            found.extend(t for t in [as_token(meta.get("content"))] if t)
    for script in index.root.iter("script"):
        if script.get("id") == "documentation_options":
            found.extend(t for t in [as_token(script.get("data-version"))] if t)
        if script.get("src") is None and "DOCUMENTATION_OPTIONS" in (script.text or ""):
            match = DOC_OPTIONS_RE.search(script.text or "")
            found.extend(t for t in [as_token(match.group(1) if match else None)] if t)
    return found


def _from_sidebar(index: DocIndex) -> list[str]:
    for el in _first(index, SIDEBARS):
        if token := _token_in(visible_text(el)):
            return [token]
    return []


def _from_title(index: DocIndex) -> list[str]:
    # the first of `//head/title | //title` (every `head/title` is a `title`): a tag search
    # stops there, where that query walked the whole tree for all of them
    for title in itertools.islice(index.root.iter("title"), 1):
        text = collapse("".join(title.itertext()))
        for pattern in TITLE_PATTERNS:
            match = pattern.search(text)
            if match and (token := as_token(match.group(1))):
                return [token]
    return []


def _collect(
    root: Element, url: str, canonical_url: str | None, index: DocIndex | None,
    selectors: tuple[str, ...] = (),
) -> list[VersionEvidence]:
    index = index or DocIndex.of(root)
    found: list[tuple[str, str]] = []
    for source, value in (("url", url_version(url)), ("canonical", url_version(canonical_url))):
        if value:
            found.append((source, value))
    extractors = (
        ("selector", lambda index: _from_selector(index, selectors)),
        ("banner", _from_banner),
        ("meta", _from_meta),
        ("sidebar", _from_sidebar),
        ("title", _from_title),
    )
    for source, extract in extractors:
        found.extend((source, value) for value in extract(index))
    found.sort(key=lambda pair: SOURCES.index(pair[0]))  # stable: precedence order
    unique = dict.fromkeys(found)  # keeps order, drops exact repeats
    return [VersionEvidence(source=s, value=v) for s, v in unique]


def detect_version(
    root: Element, url: str, canonical_url: str | None, *, index: DocIndex | None = None,
    selectors: tuple[str, ...] = (),
) -> tuple[VersionInfo, list[ExtractionWarning]]:
    """Version evidence of a page and the verdict drawn from it (never a guess).

    `selectors` (a site profile's `version`) are read before the built-in switchers.
    """
    return verdict(_collect(root, url, canonical_url, index, selectors))


BARE_NUMBER_RE = re.compile(r"^\d+$")


def numbers_agree(a: str, b: str) -> bool:
    """`versions_agree`, and a bare number written as the digits of a dotted one
    (`14` for `1.4`: the URL slug of a release series)."""
    if versions_agree(a, b):
        return True
    bare, dotted = (a, b) if BARE_NUMBER_RE.match(a) else (b, a)
    parts = version_parts(dotted)
    return bool(BARE_NUMBER_RE.match(bare)) and parts is not None and len(parts[0]) >= 2 \
        and "".join(str(n) for n in parts[0][:2]) == bare


def verdict(
    evidence: list[VersionEvidence],
) -> tuple[VersionInfo, list[ExtractionWarning]]:
    """Status and value from evidence in precedence order (see the module docstring).

    A bare number (site-level evidence from a URL segment such as `/docs/16/`) is never
    the value while a dotted number agrees with it."""
    if not evidence:
        return VersionInfo(), []
    numbers = [e for e in evidence if not is_alias(e.value)]
    aliases = [e for e in evidence if is_alias(e.value)]
    listing = ", ".join(f"{e.source}={e.value}" for e in evidence)
    if numbers:
        pairs = [(a, b) for i, a in enumerate(numbers) for b in numbers[i + 1 :]]
        if any(not numbers_agree(a.value, b.value) for a, b in pairs):
            warning = ExtractionWarning("version_conflict", listing)
            return VersionInfo(None, "conflicting", evidence), [warning]
        sources = {e.source for e in numbers}
        status = "consistent" if len(sources) >= 2 else "inferred"
        value = next((e.value for e in numbers if not BARE_NUMBER_RE.match(e.value)),
                     numbers[0].value)
        return VersionInfo(value, status, evidence), []
    names = {e.value.casefold() for e in aliases}
    if len(names) > 1:
        warning = ExtractionWarning("version_uncertain", f"only differing aliases: {listing}")
        return VersionInfo(aliases[0].value, "inferred", evidence), [warning]
    status = "consistent" if len({e.source for e in aliases}) >= 2 else "inferred"
    return VersionInfo(aliases[0].value, status, evidence), []


def page_version_key(evidence: list[VersionEvidence], url: str) -> str | None:
    """The deduplication key of a page: the `version_key` of the version its URL names;
    for a URL that names none, a non-default alias the page itself shows (a `next` or
    `dev` switcher), else None.

    Numbers the page shows without its URL naming them do not split it off: the default
    documentation (`/docs/x`, showing "2.0") and its `latest` alias (`/docs/latest/x`) are
    one page. Site-level evidence is left out: every page of the scope shares it."""
    key = version_key(url_version(url))
    if key is not None:
        return key
    own = verdict([e for e in evidence if not e.site])[0].value
    return version_key(own) if own and is_alias(own) else None


def evidence_of(version: dict[str, Any] | None) -> list[VersionEvidence]:
    """The evidence of a written record's `version` object."""
    return [VersionEvidence(str(e.get("source")), str(e.get("value")), site=bool(e.get("site")),
                            where=str(e["where"]) if e.get("where") else None)
            for e in (version or {}).get("evidence") or [] if isinstance(e, dict)]
