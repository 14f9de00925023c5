"""Find the element holding a page's main content: selectors first, text density last."""

from __future__ import annotations

from lxml import etree

from docscrawl.extract.clean import iter_content, visible_text
from docscrawl.extract.docindex import DocIndex
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


_NON_TEXT = ("script", "style", "template")


def _all_chars(el: etree._Element) -> int:
    text = etree.tostring(el, method="text", encoding="unicode", with_tail=False)
    return len("".join(text.split()))


def text_chars(el: etree._Element) -> int:
    """Non-whitespace characters of visible text under `el` (script/style excluded).

    Serialised in C (`tostring(method="text")`) rather than walked in Python; the text
    of script, style and template elements is subtracted.
    """
    total = _all_chars(el)
    for node in el.iter(*_NON_TEXT):  # in C; an XPath doing this took 10 times as long
        total -= _all_chars(node)
    return max(total, 0)


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


def _first_substantial(
    root: etree._Element, selectors: tuple[str, ...], index: DocIndex | None
) -> etree._Element | None:
    for css in selectors:
        if index is not None and not index.may_match(css):
            continue
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
    root: etree._Element, *, generator: str | None = None, selectors: tuple[str, ...] = (),
    index: DocIndex | None = None,
) -> tuple[etree._Element, str, list[ExtractionWarning]]:
    """(main element, its locator, warnings) for a parsed page.

    `generator` is a profile key (`profiles.PROFILES`) or a contract generator name.
    Order: `selectors` (a site profile's own), the generator profile's selectors,
    distinctive selectors of other generators, `main`, `article`, `[role=main]`, then a
    text-density fallback flagged `main_content_fallback`. `index` only saves walks.
    """
    profile = profile_for(generator)
    selectors = tuple(selectors) + (profile.main if profile else ()) + DISTINCTIVE_MAIN
    found = _first_substantial(root, selectors, index)
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


TITLE_BLOCK_MAX_CHARS = 3000  # a block before the main element this big is not a title
TITLE_BLOCK_LINK_SHARE = 0.5
TITLE_SKIP_TAGS = frozenset({"nav", "aside", "footer", "header", "script", "style", "form"})
TITLE_SKIP_ROLES = frozenset({"navigation", "banner", "search", "complementary"})
TITLE_LEVELS = 2  # how far above the main element the title block may sit


def title_block(main: etree._Element) -> etree._Element | None:
    """The block holding the page's `h1` when it sits just before a main element without one.

    AsciiDoc puts the title and the NAME section in `div#header`, a sibling before
    `div#content`. A preceding sibling of the main element (or of its parent) counts when
    it holds exactly one `h1`, is not navigation (tag, role), is mostly not links and is
    small. None when the main element has its own `h1`.
    """
    if next(main.iter("h1"), None) is not None:
        return None
    node = main
    for _ in range(TITLE_LEVELS):
        for sibling in node.itersiblings(preceding=True):
            if not isinstance(sibling.tag, str) or sibling.tag in TITLE_SKIP_TAGS:
                continue
            if (sibling.get("role") or "").lower() in TITLE_SKIP_ROLES:
                continue
            if len(list(sibling.iter("h1"))) != 1:
                continue
            # Measured without chrome: Asciidoctor's header also holds a site nav and the TOC.
            total = len(visible_text(sibling))
            links = sum(len(visible_text(a)) for a in iter_content(sibling) if a.tag == "a")
            if 0 < total <= TITLE_BLOCK_MAX_CHARS and links <= TITLE_BLOCK_LINK_SHARE * total:
                return sibling
            return None
        parent = node.getparent()
        if parent is None or parent.tag in ("body", "html"):
            break
        node = parent
    return None
