"""Version tokens: what counts as a version in a string or a URL, and when two name the
same release. The grammar every part shares (extraction, deduplication, search), kept
apart from the page-level detection in `docscrawl.extract.version` so that reading it
needs no HTML parser (`docscrawl search` starts without one).

Numbers: `v2`, `2.8`, `2.8.0`, `7.2.x`, `2.0.0rc1`; a bare integer only with a `v`.
Aliases (`ALIASES`): `latest`, `stable`, `dev`... In URLs only directory segments count.
"""

from __future__ import annotations

import re
from urllib.parse import unquote, urlsplit

ALIASES = frozenset(
    {
        "latest",
        "stable",
        "dev",
        "devel",
        "develop",
        "development",
        "main",
        "master",
        "next",
        "current",
        "nightly",
        "unstable",
        "unreleased",
        "edge",
        "trunk",
        "preview",
    }
)
# Aliases that count as a URL directory segment, and where: "any" directory; "lead"
# only as the first segment or right after a language code (`/dev/`, `/en/dev/`);
# "docs" also right after docs/doc/documentation (`/docs/next/`). Other aliases
# ("current", "develop"...) are too often ordinary directory names.
URL_ALIASES: dict[str, str] = {
    "latest": "any",
    "stable": "any",
    "nightly": "any",
    "next": "docs",
    "main": "docs",
    "master": "docs",
    "dev": "lead",
}
DOCS_SEGMENTS = frozenset({"docs", "doc", "documentation"})
LANGUAGE_SEGMENT_RE = re.compile(r"^[a-z]{2}(?:[-_][a-zA-Z]{2,4})?$")
_SUFFIX = r"(?:[-.]?(?:a|b|rc|alpha|beta|pre|dev|post)\.?\d*)?"
_NUMBER = rf"(?:v\s?\d+(?:\.(?:\d+|x)){{0,3}}|\d+(?:\.(?:\d+|x)){{1,3}}){_SUFFIX}"
# A whole token: "v2", "2.8", "7.2.x", "2.0.0rc1" (bare integers need the "v").
TOKEN_RE = re.compile(rf"^{_NUMBER}$", re.IGNORECASE)
# A token inside free text (selector labels, sidebar text): the first one wins.
IN_TEXT_RE = re.compile(rf"(?<![\w.])({_NUMBER})(?!\w)", re.IGNORECASE)
_PARTS_RE = re.compile(r"^v?\s?(\d+(?:\.\d+)*)(\.x)?[-.]?([a-z]+\.?\d*)?$", re.IGNORECASE)


def as_token(text: str | None) -> str | None:
    """`text` as a version token (number or alias), or None."""
    text = " ".join((text or "").split()).strip("()[]")
    if not text:
        return None
    if TOKEN_RE.match(text.replace(" ", "")) or text.casefold() in ALIASES:
        return text.replace(" ", "")
    return None


def url_version(url: str | None) -> str | None:
    """The version a URL names, as written: the one rule for the whole code base.

    The first directory segment (not the last segment, which names the page) that is a
    version token (`v2`, `2.8`, `7.2.x`) or an alias in a place `URL_ALIASES` allows
    (`/en/latest/`, `/docs/next/`). Bare integers (`/docs/16/`) are not versions here:
    they count only as site-level evidence (`docscrawl.extract.site_versions`).
    """
    if not url:
        return None
    segments = unquote(urlsplit(url).path).split("/")[1:-1]  # directories only
    for index, segment in enumerate(segments):
        if UNDERSCORE_RELEASE_RE.match(segment):
            return segment
        if as_token(segment) and _url_alias_ok(segment, segments[index - 1] if index else None):
            return segment
    return None


# A release written with underscores (Boost's `/doc/libs/1_81_0/`): three parts, never a date.
UNDERSCORE_RELEASE_RE = re.compile(r"^\d+_\d+_\d+$")


def _url_alias_ok(segment: str, previous: str | None) -> bool:
    """Numbers always count; an alias only in the places `URL_ALIASES` allows."""
    place = URL_ALIASES.get(segment.casefold())
    if not is_alias(segment):
        return True
    if place is None:
        return False
    lead = previous is None or bool(LANGUAGE_SEGMENT_RE.match(previous))
    if place == "lead":
        return lead
    return place == "any" or lead or (previous or "").casefold() in DOCS_SEGMENTS


def version_parts(token: str) -> tuple[tuple[int, ...], str] | None:
    """Numeric parts and pre-release suffix, or None for aliases."""
    match = _PARTS_RE.match(token.strip())
    if not match:
        return None
    nums = tuple(int(p) for p in match.group(1).split("."))
    return nums, (match.group(3) or "").casefold()


def versions_agree(a: str, b: str) -> bool:
    """True when two numeric tokens name the same version series (see module doc)."""
    pa, pb = version_parts(a), version_parts(b)
    if pa is None or pb is None:
        return a.casefold() == b.casefold()
    (na, sa), (nb, sb) = pa, pb
    short, long_ = (na, nb) if len(na) <= len(nb) else (nb, na)
    return long_[: len(short)] == short and (not sa or not sb or sa == sb)


def is_alias(value: str) -> bool:
    return value.casefold() in ALIASES


# Aliases that name the default documentation, not a version of its own: `/latest/x` and
# `/x` may be one page; `/next/x` and `/x` never are.
DEFAULT_ALIASES = frozenset({"latest", "stable", "current"})


def version_key(value: str | None) -> str | None:
    """What two pages must share to be merged by content deduplication: the version
    number normalized (`v2.8.x` -> `2.8`, `1_81_0` -> `1.81.0`), a non-default alias
    (`next`, `dev`), or None (no version, or a default alias such as `latest`)."""
    if not value:
        return None
    token = value.strip().casefold()
    if token in DEFAULT_ALIASES:
        return None
    if token in ALIASES:
        return token
    return token.removeprefix("v").replace("_", ".").removesuffix(".x")
