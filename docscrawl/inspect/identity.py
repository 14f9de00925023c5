"""Does a page's title, main heading and URL name the same thing (`docscrawl check`'s
identity agreement)? Word tokens compared loosely: a prefix or the same first five
letters count as the same word (`install` and `installation`).
"""

from __future__ import annotations

import re
from urllib.parse import unquote, urlsplit

GENERIC_SLUGS = frozenset({"", "index", "default", "home", "readme", "main", "start", "latest",
                           "stable", "current"})
STOP_WORDS = frozenset({"the", "a", "an", "of", "and", "or", "to", "in", "for", "on", "with",
                        "html", "htm", "documentation", "docs", "doc"})

_WORD = re.compile(r"[a-z0-9]+")


def tokens(text: str | None) -> set[str]:
    """Lowercase word tokens without stop words."""
    return {word for word in _WORD.findall((text or "").lower()) if word not in STOP_WORDS}


def _word_match(a: str, b: str) -> bool:
    if a == b:
        return True
    short, long_ = sorted((a, b), key=len)
    return len(short) >= 4 and (long_.startswith(short) or a[:5] == b[:5])


def similar(a: set[str], b: set[str]) -> bool:
    """Two token sets name the same thing: one is (nearly) inside the other."""
    if not a or not b:
        return False
    small, big = sorted((a, b), key=len)
    matched = sum(1 for word in small if any(_word_match(word, other) for other in big))
    return matched / len(small) >= 0.5


def url_slug(url: str | None) -> set[str]:
    """Tokens of the last meaningful path segment (`/guide/index.html` -> {guide})."""
    segments = [s for s in urlsplit(url or "").path.split("/") if s]
    while segments:
        leaf = unquote(segments.pop())
        leaf = re.sub(r"\.[a-z0-9]{1,5}$", "", leaf.lower())
        if leaf not in GENERIC_SLUGS and not re.fullmatch(r"v?\d+(\.\d+)*(\.x)?", leaf):
            return tokens(leaf.replace("_", " ").replace("-", " "))
    return set()


def identity_status(title: str | None, heading: str | None, url: str | None) -> tuple[str, str]:
    """(`agree`|`majority`|`disagree`|`missing`, detail) for one page."""
    if not title or not heading:
        missing = " and ".join(n for n, v in (("title", title), ("main heading", heading))
                               if not v)
        return "missing", f"no {missing}"
    t, h, u = tokens(title), tokens(heading), url_slug(url)
    th = similar(t, h)
    if not u:
        return ("agree", "URL has no meaningful slug") if th else (
            "disagree", "title and main heading differ")
    tu, hu = similar(t, u), similar(h, u)
    if th and (tu or hu):
        return "agree", "title, main heading and URL agree"
    if th:
        return "majority", "URL slug differs from title and main heading"
    if hu:
        return "majority", "title differs from main heading and URL"
    if tu:
        return "majority", "main heading differs from title and URL"
    return "disagree", "title, main heading and URL all differ"
