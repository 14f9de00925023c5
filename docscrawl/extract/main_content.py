"""Find the element holding a page's main content: selectors first, text density last."""

from __future__ import annotations

from lxml import etree

from docscrawl.extract.model import ExtractionWarning
from docscrawl.extract.profiles import (
    CHROME_TAGS,
    CHROME_TOKENS,
    DISTINCTIVE_MAIN,
    GENERIC_MAIN,
    profile_for,
    select,
)

MIN_MAIN_CHARS = 1  # a selector match without text is treated as empty (JS shell)
DESCEND_SHARE = 0.7  # the fallback descends into a child holding this share of the text
LANDMARK_SHARE = 0.6  # a generic landmark descends into its single article holding this
CHROME_LINK_DENSITY = 0.3  # a chrome-named block counts as chrome above this link density
CHROME_ROLES = frozenset({
    "navigation", "banner", "contentinfo", "complementary", "search", "dialog", "alertdialog",
})


def locator(el: etree._Element) -> str:
    """Stable locator of an element: its XPath in the parsed tree."""
    return el.getroottree().getpath(el)


def _chars(text: str | None) -> int:
    return len("".join(text.split())) if text else 0


def text_chars(el: etree._Element) -> int:
    """Non-whitespace characters of visible text under `el` (script/style excluded)."""
    total = _chars(el.text) if el.tag not in ("script", "style", "template") else 0
    for node in el.iterdescendants():
        if isinstance(node.tag, str) and node.tag not in ("script", "style", "template"):
            total += _chars(node.text)
        total += _chars(node.tail)
    return total


def has_text(el: etree._Element, minimum: int) -> bool:
    """True when `el` holds at least `minimum` non-whitespace text characters (stops early)."""
    total = 0
    for node in el.iter():
        if isinstance(node.tag, str) and node.tag not in ("script", "style", "template"):
            total += _chars(node.text)
        if node is not el:
            total += _chars(node.tail)
        if total >= minimum:
            return True
    return False


def _is_chrome_named(el: etree._Element) -> bool:
    words = {
        w.lower()
        for value in (el.get("class"), el.get("id"))
        if value
        for w in value.replace("_", "-").replace("-", " ").split()
    }
    return bool(words & CHROME_TOKENS)


def _content_values(top: etree._Element) -> dict[etree._Element, tuple[int, int]]:
    """(text chars, link chars) per element under `top`, chrome subtrees counting zero."""
    values: dict[etree._Element, tuple[int, int]] = {}
    for el in reversed(list(top.iter())):
        if not isinstance(el.tag, str):
            continue
        hidden = (el.get("aria-hidden") or "").lower() == "true"
        if el.tag in CHROME_TAGS or hidden or (el.get("role") or "").lower() in CHROME_ROLES:
            values[el] = (0, 0)
            continue
        text = _chars(el.text)
        links = 0
        for child in el:
            text += _chars(child.tail)
            child_text, child_links = values.get(child, (0, 0))
            text += child_text
            links += child_links
        if el.tag == "a":
            links = text
        if _is_chrome_named(el) and text and links / text > CHROME_LINK_DENSITY:
            text = links = 0
        values[el] = (text, links)
    return values


def _scored_fallback(root: etree._Element) -> etree._Element:
    """Descend from <body> into the child holding most non-link text, while it dominates."""
    body = root.find("body")
    current = body if body is not None else root
    values = _content_values(current)

    def score(el: etree._Element) -> int:
        text, links = values.get(el, (0, 0))
        return text - links

    while True:
        children = [child for child in current if isinstance(child.tag, str)]
        if not children:
            return current
        best = max(children, key=score)
        if score(current) <= 0 or score(best) < DESCEND_SHARE * score(current):
            return current
        current = best


def _first_substantial(root: etree._Element, selectors: tuple[str, ...]) -> etree._Element | None:
    for css in selectors:
        for el in select(root, css):
            if has_text(el, MIN_MAIN_CHARS):
                return el
    return None


def _generic_landmark(root: etree._Element) -> etree._Element | None:
    for css in GENERIC_MAIN:
        matches = [el for el in select(root, css) if has_text(el, MIN_MAIN_CHARS)]
        if not matches:
            continue
        chosen = max(matches, key=text_chars) if css == "main" else matches[0]
        inner = [el for el in select(chosen, "article, [role=main]") if el is not chosen]
        if len(inner) == 1 and text_chars(inner[0]) >= LANDMARK_SHARE * text_chars(chosen):
            return inner[0]
        return chosen
    return None


def find_main_content(
    root: etree._Element, *, generator: str | None = None
) -> tuple[etree._Element, str, list[ExtractionWarning]]:
    """(main element, its locator, warnings) for a parsed page.

    `generator` is a profile key (`profiles.PROFILES`) or a contract generator name.
    Order: the profile's selectors, distinctive selectors of other generators, `main`,
    `article`, `[role=main]`, then a text-density fallback flagged `main_content_fallback`.
    """
    profile = profile_for(generator)
    selectors = (profile.main if profile else ()) + DISTINCTIVE_MAIN
    found = _first_substantial(root, selectors)
    if found is None:
        found = _generic_landmark(root)
    if found is not None:
        return found, locator(found), []
    el = _scored_fallback(root)
    where = locator(el)
    warning = ExtractionWarning(
        "main_content_fallback",
        f"no content selector or landmark matched; chose {where} by text density",
    )
    return el, where, [warning]
