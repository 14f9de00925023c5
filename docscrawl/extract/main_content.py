"""Find the element holding a page's main content: selectors first, text density last."""

from __future__ import annotations

import re
from collections.abc import Iterator

from lxml import etree

from docscrawl.extract.clean import iter_content, visible_text
from docscrawl.extract.docindex import DocIndex
from docscrawl.extract.headings import HEADING_TAGS
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


_FIRST_H1 = etree.XPath(
    "(//body//h1[not(ancestor::nav or ancestor::aside or ancestor::footer)])[1]"
)
# Short elements that can carry the page title (Haddock's is a `p.caption`, Doxygen's a
# `div.title`).
_TITLE_LIKE = etree.XPath(
    "//body//*[self::h1 or self::h2 or self::h3 or self::h4 or self::p or self::span"
    " or self::div or self::td or self::strong or self::b]"
    "[string-length(normalize-space()) >= 3][string-length(normalize-space()) <= $n]"
    "[starts-with(concat($t, ' '), concat(normalize-space(), ' '))]"
)
_HEADINGS = etree.XPath(
    "//body//*[self::h2 or self::h3 or self::h4 or self::h5 or self::h6]"
    "[not(ancestor::nav or ancestor::aside or ancestor::footer)]"
)
_SECTION_NUMBER = re.compile(r"^(?:[A-Z]|\d+)(?:\.\d+)*\.?\s+")
TITLE_SEPARATORS = ("|", " - ", " – ", " — ", " · ", ": ", " (")


def title_parts(title: str | None) -> list[str]:
    """The `<title>` and its parts between separators ("SDL: Foo Reference" -> itself,
    "SDL", "Foo Reference"): the texts a page's title element may show."""
    if not title:
        return []
    parts = [title]
    for sep in TITLE_SEPARATORS:
        parts = [piece for part in parts for piece in part.split(sep)]
    pieces = sorted((p.strip() for p in parts if len(p.strip()) >= 3), key=len, reverse=True)
    return list(dict.fromkeys([title, *pieces]))  # the most specific first


def names_title(text: str, parts: list[str]) -> bool:
    """True when `text` is one of the title's parts or its leading words (Doxygen's
    "SDL_endian.h" of "SDL: SDL_endian.h Source File")."""
    return len(text) >= 3 and any(p == text or p.startswith(text + " ") for p in parts)


def title_element(root: etree._Element, title: str | None) -> etree._Element | None:
    """The element naming the page: the first short element whose whole text is the
    `<title>`, one of its parts (`title_parts`) or their leading words; else a heading
    that is one of them after its section number ("1.3 Conventions"); else the first
    `h1` outside nav/aside/footer."""
    parts = title_parts(title)
    for text in parts:
        found = _TITLE_LIKE(root, n=len(text), t=text)
        if found:
            return found[0]
    for heading in _HEADINGS(root) if parts else ():  # "1.3 Conventions" (Texinfo)
        text = _SECTION_NUMBER.sub("", " ".join("".join(heading.itertext()).split()))
        if text.rstrip(" ¶#") in parts:
            return heading
    found = _FIRST_H1(root)
    return found[0] if found else None


def _contains(el: etree._Element, inner: etree._Element | None) -> bool:
    return inner is not None and (inner is el or any(a is el for a in inner.iterancestors()))


def scored_fallback(root: etree._Element, title: str | None = None) -> etree._Element:
    """Descend from <body> into the child holding most non-link text, while it dominates
    and while it keeps the page's title element (`title_element`): a page title in a
    `<header>` before the article (gi-docgen) or in a caption above the module's
    interface (Haddock) belongs to the main content. An `h1` above a child that opens
    with an `h1` of its own is the template's bar, not the page's title (`_bar_title`)."""
    body = root.find("body")
    current = body if body is not None else root
    values = _content_values(current)
    titled = title_element(root, title)

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
        if _contains(current, titled) and (best is titled or not _contains(best, titled)):
            opening = _bar_title(titled, best, values)
            if opening is None:
                return current  # the title with the rest, never the title alone
            titled = opening  # the page names itself below the bar: keep that title
        if _headed(best):
            return current  # a heading with its content, never the content alone
        current = best


def _bar_title(titled: etree._Element | None, best: etree._Element,
               values: dict[etree._Element, tuple[int, int]]) -> etree._Element | None:
    """The `h1` that `best` opens with when the title element found above it is or holds
    an `h1` too, else None.

    A template's bar repeats a heading on every page above the content (erl_docgen's
    `div.topbar-title h1`: the application's name on its User's Guide title page, a copy
    of the chapter's `h1` on the others; zzzeeksphinx's `#docs-header h1`, the site name
    the `<title>` ends with). Content that opens with its own `h1`, before any text of
    its own (chrome left aside), names the page itself; a title above content that
    opens with text or a lower heading (gi-docgen's `<header>`, Haddock's caption) is
    still the page's."""
    if titled is None or next(titled.iter("h1"), None) is None:
        return None  # the title element is no `h1` and holds none (a caption, a div)
    opening = _opening_heading(best, values)
    return opening if opening is not None and opening.tag == "h1" else None


def _opening_heading(el: etree._Element,
                     values: dict[etree._Element, tuple[int, int]]) -> etree._Element | None:
    """The first heading of `el` when no text of `el` comes before it; chrome (by tag or
    class name, or scored zero by `_content_values`) is passed over: zzzeeksphinx's
    narrow-screen "Up: Home" navigation sits before its `#docs-body`."""
    if el.tag in HEADING_TAGS:
        return el
    if _chars(el.text):
        return None
    for child in el:
        if (not isinstance(child.tag, str) or values.get(child, (0, 0)) == (0, 0)
                or child.tag in CHROME_TAGS or _is_chrome_named(child)):
            if _chars(child.tail):
                return None
            continue
        return _opening_heading(child, values)
    return None


def _headed(el: etree._Element) -> bool:
    """True when the nearest sibling with text before or after `el` is a heading: `el` is
    part of a section whose heading it would leave behind (Doxygen's index pages, a
    textblock, then `<h3>- p -</h3>` before the member list)."""
    return _next_is_heading(el.itersiblings(preceding=True)) or _next_is_heading(
        el.itersiblings())


def _next_is_heading(siblings: Iterator[etree._Element]) -> bool:
    for sibling in siblings:
        if not isinstance(sibling.tag, str):
            continue
        if sibling.tag in HEADING_TAGS:
            return True
        if has_text(sibling, 1):
            return False
    return False


def _first_substantial(
    root: etree._Element, selectors: tuple[str, ...], index: DocIndex | None
) -> etree._Element | None:
    for css in selectors:
        if index is not None and not index.may_match(css):
            continue
        for el in index.css(root, css) if index is not None else select(root, css):
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
    index: DocIndex | None = None, title: str | None = None,
) -> tuple[etree._Element, str, list[ExtractionWarning]]:
    """(main element, its locator, warnings) for a parsed page.

    `generator` is a profile key (`profiles.PROFILES`) or a contract generator name.
    Order: `selectors` (a site profile's own), the generator profile's selectors,
    distinctive selectors of other generators, `main`, `article`, `[role=main]`, then a
    text-density fallback flagged `main_content_fallback` (which keeps the element naming
    the page, given the page's `title`). `index` only saves walks.
    """
    profile = profile_for(generator)
    selectors = tuple(selectors) + (profile.main if profile else ()) + DISTINCTIVE_MAIN
    found = _first_substantial(root, selectors, index)
    if found is None:
        found = _generic_landmark(root)
    if found is not None:
        return found, locator(found), []
    el = scored_fallback(root, title)
    where = locator(el)
    warning = ExtractionWarning(
        "main_content_fallback",
        f"no content selector or landmark matched; chose {where} by text density",
    )
    return el, where, [warning]


TITLE_BLOCK_MAX_CHARS = 3000  # a block before the main element this big is not a title
TITLE_BLOCK_LINK_SHARE = 0.5
TITLE_SKIP_TAGS = frozenset({"head", "nav", "aside", "footer", "header", "script", "style", "form"})
TITLE_SKIP_ROLES = frozenset({"navigation", "banner", "search", "complementary"})
TITLE_LEVELS = 2  # how far above the main element the title block may sit


_NAMED = etree.XPath(
    ".//*[string-length(normalize-space()) >= 3]"
    "[starts-with(concat($t, ' '), concat(normalize-space(), ' '))]"
)


_OWN_HEADINGS = ("h2", "h3", "h4", "h5", "h6")


def _has_title_heading(main: etree._Element, parts: list[str]) -> bool:
    for heading in main.iter(*_OWN_HEADINGS):  # `iter`, not a `//` XPath (every node)
        if heading is main:
            continue
        text = _SECTION_NUMBER.sub("", " ".join("".join(heading.itertext()).split()))
        if text.rstrip(" ¶#") in parts or " ".join(
                "".join(heading.itertext()).split()).rstrip(" ¶#") in parts:
            return True
    return False


def _names_page(block: etree._Element, parts: list[str]) -> bool:
    """True when an element of `block` shows one of the title's parts (`names_title`)."""
    return any(_NAMED(block, t=text) for text in parts)


def title_block(main: etree._Element, title: str | None = None) -> etree._Element | None:
    """The block holding the page's title when it sits just before a main element without
    an `h1`.

    AsciiDoc puts the title and the NAME section in `div#header`, a sibling before
    `div#content`; Doxygen puts `div.title` in `div.header` before `div.contents`. A
    preceding sibling of the main element (or of its parent) counts when it holds exactly
    one `h1` or an element whose whole text is the `<title>` or a part of it, is not
    navigation (tag, role), is mostly not links and is small. None when the main
    element has its own `h1`.
    """
    if next(main.iter("h1"), None) is not None:
        return None
    parts = title_parts(title)
    if parts and _has_title_heading(main, parts):
        parts = []  # the main element names the page itself (DocBook's h2 chapter title)
    node = main
    for _ in range(TITLE_LEVELS):
        for sibling in node.itersiblings(preceding=True):
            if not isinstance(sibling.tag, str) or sibling.tag in TITLE_SKIP_TAGS:
                continue
            if (sibling.get("role") or "").lower() in TITLE_SKIP_ROLES:
                continue
            h1s = len(list(sibling.iter("h1")))
            if h1s > 1 or (h1s == 0 and not (parts and _names_page(sibling, parts))):
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
