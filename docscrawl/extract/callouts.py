"""Callouts (admonitions): which elements are callouts, their type and their title.

Marker classes come first (`admonition`, `custom-block`, `theme-admonition`...), then the
type is read from a prefixed or bare class token, then from the title text. Types map
onto the five GFM alerts (`ALERTS`), which is how the renderer writes them.
"""

from __future__ import annotations

import re
from functools import lru_cache

from lxml import etree

from docscrawl.extract.clean import visible_text

CALLOUT_MARKERS = frozenset({
    "admonition", "admonitionblock", "custom-block", "markdown-alert", "theme-admonition",
    "starlight-aside", "deprecationblock", "deprecation-block", "callout", "alert", "stab",
})
CALLOUT_PREFIXES = (
    "theme-admonition-", "alert--", "alert-", "markdown-alert-", "starlight-aside--",
    "callout-", "admonition-",
)
BARE_CALLOUT_CLASSES = frozenset({  # a `div` with one of these alone is a callout (mdbook)
    "note", "warning", "tip", "important", "caution", "danger", "attention", "hint",
    "seealso", "deprecated", "warn",
})
GENERIC_CALLOUT_TYPES = frozenset({"admonition", "custom", "alert", "callout"})
CALLOUT_TAGS = frozenset({"div", "aside", "section", "details", "blockquote"})
ALERTS: dict[str, str] = {  # callout type -> GFM alert
    **dict.fromkeys((
        "note", "info", "seealso", "abstract", "summary", "tldr", "todo", "example", "quote",
        "cite", "question", "faq", "help", "details", "secondary", "primary", "portability",
        "admonition", "custom",
    ), "NOTE"),
    **dict.fromkeys(("tip", "hint", "success", "check", "done"), "TIP"),
    **dict.fromkeys(("important", "attention"), "IMPORTANT"),
    **dict.fromkeys(("warning", "warn", "deprecated", "deprecationblock",
                     "deprecation-block", "unstable"), "WARNING"),
    **dict.fromkeys(("caution", "danger", "error", "failure", "fail", "missing", "bug"),
                    "CAUTION"),
}
CALLOUT_TITLE_CLASSES = frozenset({
    "admonition-title", "custom-block-title", "markdown-alert-title",
    "starlight-aside__title", "alert-heading", "admonition-heading", "title",
})
CALLOUT_TITLE_PARTS = ("admonitionheading",)  # Docusaurus CSS modules: admonitionHeading_x1
GFM_ALERT_RE = re.compile(r"^\s*\[!(\w+)\]")


def callout_type(el: etree._Element) -> str | None:
    """The callout type (`note`, `warning`, ...) when `el` is an admonition, else None."""
    tag = el.tag
    if tag not in CALLOUT_TAGS or tag == "blockquote":
        return None
    cls = el.get("class")
    if not cls:
        return None
    found = _callout_classes(tag, cls)
    if found != _FROM_TITLE:
        return found
    title = callout_title(el)
    word = visible_text(title).lower().rstrip(":") if title is not None else ""
    if word in ALERTS:
        return word
    return next((t for t in cls.lower().split() if t in ALERTS), "note")


_FROM_TITLE = ""  # `_callout_classes`: a callout whose classes name no type
CALLOUT_CLASS_CACHE = 1024


@lru_cache(maxsize=CALLOUT_CLASS_CACHE)
def _callout_classes(tag: str, cls: str) -> str | None:
    """What the class attribute of an element with tag `tag` says: no callout (None), a
    callout of the type a class names, or a callout whose title tells (`_FROM_TITLE`).
    Pure, so memoized: a site repeats a few class strings on every page, and most
    classed blocks are no callout."""
    tokens = cls.lower().split()
    marked = bool(CALLOUT_MARKERS.intersection(tokens)) or any(
        t.startswith(("theme-admonition-", "alert--")) for t in tokens
    )
    bare = [t for t in tokens if t in BARE_CALLOUT_CLASSES]
    is_callout = marked or (tag == "div" and bare) or (
        tag == "details" and any(t in ALERTS for t in tokens)
    )
    if not is_callout:
        return None
    for token in tokens:
        for prefix in CALLOUT_PREFIXES:
            if token.startswith(prefix) and token[len(prefix):] in ALERTS:
                return token[len(prefix):]
    for token in tokens:
        if token in ALERTS and token not in GENERIC_CALLOUT_TYPES:
            return token
    return _FROM_TITLE


def callout_title(el: etree._Element) -> etree._Element | None:
    for child in el:
        if not isinstance(child.tag, str):
            continue
        if child.tag == "summary":
            return child
        cls = (child.get("class") or "").lower()
        if set(cls.split()) & CALLOUT_TITLE_CLASSES or any(p in cls for p in CALLOUT_TITLE_PARTS):
            return child
    return None
