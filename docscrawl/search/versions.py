"""Versions in search: how a query names one (`version_named`), a URL without its version
segments (`unversioned`, to find the same section in another version), and which version
a search prefers when none is asked for: the site's default, and the versions that are
only other names for it.

The default is the version of the page the crawl started from (the unversioned root,
or where it redirects), else the most common. A site often serves its default under a
second name as well (`/latest/...` beside `/...`, `/stable/` beside `/6.2/`): the crawl
keeps one page for the identical copies and may label it with the alias. Evidence that
version A is an alias of the default D: A's pages were also seen at URLs in D's part of
the site (a directory whose pages are mostly D), i.e. the crawl found them to be the
same pages. Results of an alias are preferred like the default's.

A version asked for by name (`--version`, MCP's `version`) is read as the version grammar
reads labels (`resolve`): `18.20.4`, `v18.20.4`, `v18` and `18` all name a crawl's
`v18.20.4` when nothing else does.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable

from docscrawl.extract.version_token import (
    DEFAULT_ALIASES,
    url_version,
    version_key,
    version_parts,
    versions_agree,
)


class VersionError(ValueError):
    """A version the index does not hold, or names several of (one line)."""


def _directory(url: str) -> str:
    return url.split("#", 1)[0].split("?", 1)[0].rsplit("/", 1)[0]


def choose_default(seed_version: str | None, counts: Counter[str]) -> str | None:
    """The start page's version, else the most common one."""
    if seed_version:
        return seed_version
    return counts.most_common(1)[0][0] if counts else None


def default_aliases(pages: Iterable[tuple[str | None, list[str]]],
                    default: str | None) -> set[str]:
    """Versions whose pages are, for the most part, copies of the default's.

    A page (its version, its canonical and observed URLs) belongs to its own version, to
    the versions its URLs name (`/docs/latest/x` names `latest`), and to the version most
    pages of each of its URLs' directories have. A version is an alias of the default when
    at least half of the pages it has are also the default's: whichever copy the crawl
    kept, and whichever label that copy carries."""
    pages = [(version, urls) for version, urls in pages if version or urls]
    if not default:
        return set()
    by_directory: dict[str, Counter[str]] = defaultdict(Counter)
    for version, urls in pages:
        if version:
            for directory in {_directory(url) for url in urls}:
                by_directory[directory][version] += 1
    majority = {d: c.most_common(1)[0][0] for d, c in by_directory.items()}
    copies: Counter[str] = Counter()
    totals: Counter[str] = Counter()
    for version, urls in pages:
        places = {version} if version else set()
        places |= {named for url in urls if (named := url_version(url))
                   and not (version and version_key(named) == version_key(version))}
        places |= {majority[d] for url in urls if (d := _directory(url)) in majority}
        for other in places - {default}:
            totals[other] += 1
            if default in places:
                copies[other] += 1
    return {v for v, n in copies.items() if 2 * n >= totals[v]}


def resolve(asked: str, known: list[str], default: str | None) -> str:
    """The version of `known` that `asked` names (see `candidates`), else a
    `VersionError` that lists `known` (or the several it names)."""
    found = candidates(asked, known, default)
    if len(found) == 1:
        return found[0]
    shown = ", ".join(known) if known else "none"
    if found:
        raise VersionError(f"version {asked!r} names several versions in the index: "
                           f"{', '.join(found)} (versions: {shown})")
    raise VersionError(f"version {asked!r} is not in the index (versions: {shown})")


def candidates(asked: str, known: list[str], default: str | None) -> list[str]:
    """The versions of `known` that `asked` may name, best first: itself; else the one
    with the same normalized number (`18.20.4` / `v18.20.4`, `2.2` / `2.2.x`, `1_81_0` /
    `1.81.0`, any case); else the release series it names (`18` or `v18` -> `v18.20.4`;
    `2.2.4` -> `2.2.x`, the most precise series holding it); a default alias (`latest`,
    `stable`) the index lacks names the default. More than one: ambiguous."""
    if asked in known:
        return [asked]
    key = version_key(asked)
    same = [v for v in known if v.casefold() == asked.casefold()
            or (key is not None and version_key(v) == key)]
    if same:
        return same
    if asked.casefold() in DEFAULT_ALIASES and default is not None and default in known:
        return [default]
    series = [v for v in known if versions_agree(asked, v)]
    holding = [v for v in series if len(_numbers(v)) <= len(_numbers(asked))]
    if holding:  # labels that are series holding the version asked for: the most precise
        most = max(len(_numbers(v)) for v in holding)
        return [v for v in holding if len(_numbers(v)) == most]
    return series


def _numbers(version: str) -> tuple[int, ...]:
    parts = version_parts(version)
    return parts[0] if parts else ()


def version_forms(version: str) -> set[str]:
    """How a query may name a version: `v3.25` and `3.25`; `2.2.x` also as `2.2`."""
    base = version.lower().removeprefix("v")
    forms = {version.lower(), base}
    for suffix in (".x", ".*"):
        if base.endswith(suffix):
            forms.add(base.removesuffix(suffix))
    return {form for form in forms if any(ch.isdigit() for ch in form)}


def version_named(query: str, known: list[str]) -> str | None:
    """The version of `known` the query names as a whole token (longest form first)."""
    forms = sorted(((form, version) for version in known for form in version_forms(version)),
                   key=lambda pair: len(pair[0]), reverse=True)
    for form, version in forms:
        if _mention(form).search(query):
            return version
    return None


def without_version(query: str, version: str) -> str:
    """The query with its mentions of `version` left out: a version named in a query
    says where to look (the search filters by it), not what the answer says, and its
    digits would match unrelated numbers ("requests 2.28" -> "Python 2 support")."""
    for form in sorted(version_forms(version), key=len, reverse=True):
        query = _mention(form).sub(" ", query)
    return " ".join(query.split())


def _mention(form: str) -> re.Pattern[str]:
    """A version form as a whole token of a query (`v` prefix allowed), any case."""
    return re.compile(r"(?<![\w.])v?" + re.escape(form) + r"(?![\w]|\.\d)", re.I)


def unversioned(url: str, versions: list[str]) -> str:
    """A URL with its version path segments left out (`/3.6/guide/x` -> `/guide/x`)."""
    forms = {form for version in versions for form in version_forms(version)}
    forms |= {version.lower() for version in versions}
    head, sep, path = url.partition("://")
    segments = path.split("/")
    return head + sep + "/".join(
        seg for i, seg in enumerate(segments)
        if i == 0 or (seg.lower() not in forms and seg.lower().removeprefix("v") not in forms))
