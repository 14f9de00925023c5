"""What counts as chrome inside the main content: skipped while walking, never removed.

`is_chrome(el)` is called once per element during a walk, so it only looks at the tag,
the class/id tokens and a few attributes (no XPath). The heuristics are data tables.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from functools import lru_cache

from lxml import etree
from mypy_extensions import mypyc_attr

from docscrawl.extract.md_text import collapse

# Elements that never carry documentation text.
CHROME_TAGS = frozenset({
    "script", "style", "noscript", "template", "link", "meta", "svg", "iframe", "canvas",
    "object", "embed", "dialog", "button", "form", "input", "select", "textarea", "option",
    "nav", "footer",
})

# Buttons are controls, except the ones an API renderer fills with documentation (Redoc
# puts each response's description, and the operation's verb and path, in a button).
_BUTTON_CONTENT = etree.XPath(
    "boolean(.//p or .//*[contains(concat(' ', normalize-space(@class), ' '), ' http-verb ')])"
)

# Permalink-marker classes: chrome when the element shows no more than a marker
# (docsify wraps the whole heading text in `a.anchor`, which is content).
PERMALINK_CLASSES = frozenset({
    "headerlink", "hash-link", "header-anchor", "anchorjs-link", "anchor-link", "anchor",
    "heading-anchor", "sl-anchor-link", "zola-anchor", "permalink",
})
PERMALINK_MAX_CHARS = 2
# Exact class tokens (lower case) that mark chrome whatever the tag.
CHROME_CLASSES = frozenset({
    # copy buttons
    "copybtn", "copy-button", "copybutton", "md-clipboard", "copy-code-button",
    # line-number gutters
    "linenos", "lineno", "linenodiv", "src-line-numbers", "lnt", "line-numbers-rows",
    "rouge-gutter", "hljs-ln-numbers", "react-syntax-highlighter-line-number",
    # edit / source links, page metadata
    "edit-this-page", "theme-edit-this-page", "md-content__button", "edit-link",
    "edit-page-link", "md-source-file", "theme-last-updated", "viewcode-link",
    "srclink", "out-of-band", "rightside", "git-revision-date-localized-plugin",
    # search, version switchers, banners
    "search", "searchbox", "search-form", "docsearch", "version-switcher",
    "version-selector", "rst-versions", "md-version", "theme-doc-version-badge",
    "theme-doc-version-banner", "cc-banner", "cc-window",
    # in-article navigation: TOC, pagination, breadcrumbs, feedback
    "toc", "table-of-contents", "page-toc", "on-this-page", "md-nav", "theme-doc-toc-mobile",
    "pagination-nav", "prev-next", "prev-next-area", "rst-footer-buttons", "md-footer",
    "pager", "pagination", "docsify-pagination-container", "nav-links", "breadcrumbs",
    "breadcrumb", "rustdoc-breadcrumbs",
    "theme-doc-breadcrumbs", "wy-breadcrumbs", "md-feedback", "feedback", "md-top",
    "theme-doc-footer", "notable-traits",
    # screen-reader-only text and skip links
    "sr-only", "visually-hidden", "visuallyhidden", "screen-reader-text", "skip-link",
    "hideme",
})
# Class tokens that are chrome only on one tag (elsewhere they are common words).
TAG_CLASS_CHROME: dict[str, frozenset[str]] = {
    "a": frozenset({"edit-page", "edit-link"}),
    "span": frozenset({"lang", "ln"}),
    "td": frozenset({"gutter"}),
    "summary": frozenset({"hideme"}),
}
LOCAL_TOC_COMPANIONS = frozenset({"local", "topic"})
# Substrings of the class attribute (lower case) that mark chrome.
CHROME_CLASS_PARTS = ("clipboard", "cookie", "consent", "copybutton", "buttongroup")
CHROME_CLASS_PARTS_RE = re.compile("|".join(CHROME_CLASS_PARTS))
CHROME_IDS = frozenset({
    "searchbox", "search", "search-form", "toc", "copy-path", "toggle-all-docs",
    "version-switcher", "cookie-banner", "onetrust-banner-sdk", "onetrust-consent-sdk",
})
CHROME_ROLES = frozenset({"navigation", "search", "toolbar", "dialog", "alertdialog"})
# Link texts that are permalink markers when alone in a link to a fragment; `↑` is the
# back-to-top marker RDoc's darkfish writes after every heading's `¶` (`href="#top"`).
PERMALINK_TEXTS = frozenset({"", "¶", "#", "§", "🔗", "#️⃣", "link", "↑"})
EDIT_LINK_RE = re.compile(
    r"^\s*(edit( this page| page| on \w+| source)|improve this page|suggest an edit"
    r"|view page source|view source)\b",
    re.IGNORECASE,
)
HIDDEN_STYLE_RE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)
# aria-hidden elements are decoration only when they carry (almost) no text.
ARIA_HIDDEN_MAX_CHARS = 3
ZERO_WIDTH = "\u200b\u200c\u200d\ufeff"


NO_TOKENS: frozenset[str] = frozenset()
CLASS_TOKEN_CACHE = 4096


def class_tokens(el: etree._Element) -> frozenset[str]:
    """The lower-cased class tokens of an element."""
    cls = el.get("class")
    return _tokens(cls) if cls else NO_TOKENS


@lru_cache(maxsize=CLASS_TOKEN_CACHE)
def _tokens(cls: str) -> frozenset[str]:
    """Pure, so memoized: a walk meets the same few class strings again and again."""
    return frozenset(cls.lower().split())


def is_chrome(el: etree._Element) -> bool:
    """True when `el` (and its subtree) is page chrome, not documentation content."""
    tag = el.tag
    if not isinstance(tag, str):  # comments, processing instructions
        return True
    if tag in CHROME_TAGS:
        return not (tag == "button" and _BUTTON_CONTENT(el))
    keys = el.keys()
    if not keys:  # most elements: nothing below can match without an attribute
        return tag == "a" and _is_chrome_link(el)
    get = el.get
    cls = get("class")
    if cls:
        verdict = _class_verdict(tag, cls)
        if verdict & CLASS_CHROME:
            return True
        if verdict & CHECK_GUTTER and _is_line_number_gutter(el, tag):
            return True
        if verdict & CHECK_MARKER and _shows_only_a_marker(el):
            return True
    if _CHROME_ATTRIBUTES.isdisjoint(keys):
        # the usual element: a class (already judged), an href, a title...
        return tag == "a" and _is_chrome_link(el)
    if (get("id") or "").lower() in CHROME_IDS:
        return True
    role = (get("role") or "").lower()
    if role in CHROME_ROLES:
        return True
    if role != "tabpanel" and _is_hidden(el, tag):
        return True
    return tag == "a" and _is_chrome_link(el)


# The attributes the checks after the class verdict read (id, role, `_is_hidden`).
_CHROME_ATTRIBUTES = frozenset({"id", "role", "hidden", "style", "aria-hidden"})
CLASS_CHROME, CHECK_GUTTER, CHECK_MARKER = 1, 2, 4
CLASS_VERDICTS = 4096


@lru_cache(maxsize=CLASS_VERDICTS)
def _class_verdict(tag: str, cls: str) -> int:
    """What the class attribute alone says about an element with tag `tag`:
    CLASS_CHROME, or the element checks still needed (CHECK_GUTTER, CHECK_MARKER), or 0.

    Pure, so memoized: a site repeats the same few hundred class strings on every page.
    """
    cls = cls.lower()
    tokens = set(cls.split())
    if tokens & CHROME_CLASSES or CHROME_CLASS_PARTS_RE.search(cls):
        return CLASS_CHROME
    if tag in TAG_CLASS_CHROME and tokens & TAG_CLASS_CHROME[tag]:
        return CLASS_CHROME
    if "contents" in tokens and tokens & LOCAL_TOC_COMPANIONS:
        return CLASS_CHROME  # docutils `.. contents::`: an in-article table of contents
    if tag == "aside" and tokens & {"sidebar-nav", "toc", "related"}:
        return CLASS_CHROME
    verdict = 0
    if "line-numbers" in tokens:
        verdict |= CHECK_GUTTER
    if tokens & PERMALINK_CLASSES:
        verdict |= CHECK_MARKER
    return verdict


def _shows_only_a_marker(el: etree._Element) -> bool:
    text = "".join(el.itertext()).strip().strip(ZERO_WIDTH)
    return text in PERMALINK_TEXTS or len(text) <= PERMALINK_MAX_CHARS


def _is_line_number_gutter(el: etree._Element, tag: str) -> bool:
    """Prism puts `line-numbers` on the `pre` itself; rustdoc on a gutter element."""
    if tag != "pre":
        return True
    parent = el.getparent()
    return parent is not None and "example-wrap" in class_tokens(parent)


def _is_hidden(el: etree._Element, tag: str) -> bool:
    if (el.get("role") or "").lower() == "tabpanel":
        return False  # inactive tabs are hidden but hold real alternatives (npm/yarn...)
    if el.get("hidden") is not None:
        return True
    style = el.get("style")
    if style and HIDDEN_STYLE_RE.search(style):
        return True
    if (el.get("aria-hidden") or "").lower() != "true":
        return False
    if tag in {"i", "img", "span", "a"} or len(el) == 0:
        return len(visible_text(el, skip_chrome=False)) <= ARIA_HIDDEN_MAX_CHARS
    return False


# Blocks whose text is prose (a sentence, a list item, a cell), and the inline elements
# that may wrap a link inside them.
PROSE_BLOCKS = frozenset({"p", "li", "dd", "dt", "td", "th", "blockquote", "figcaption",
                          "caption"})
PROSE_INLINE = frozenset({"span", "code", "tt", "em", "strong", "b", "i", "u", "var", "cite",
                          "samp", "kbd", "small", "sup", "sub", "font", "nobr"})


def _in_prose(el: etree._Element) -> bool:
    """True when `el` sits in a prose block, through inline wrappers only: a word of a
    sentence (Erlang's docs link every cross reference with `javascript:erlhref(...)`),
    not a toolbar button."""
    node = el.getparent()
    while node is not None and node.tag in PROSE_INLINE:
        node = node.getparent()
    return node is not None and node.tag in PROSE_BLOCKS


def _is_chrome_link(el: etree._Element) -> bool:
    href = (el.get("href") or "").strip()
    if href.lower().startswith("javascript:"):
        return not _in_prose(el)  # in prose its text is kept; the link itself never is
    for child in el:
        if isinstance(child.tag, str) and "viewcode-link" in class_tokens(child):
            return True
    title = el.get("title") or ""
    # most anchors hold their text alone (`itertext` then yields just it)
    text = ((el.text or "") if not len(el) else "".join(el.itertext())).strip().strip(ZERO_WIDTH)
    if (title and EDIT_LINK_RE.match(title)) or (text and EDIT_LINK_RE.match(text)):
        return True
    if text.lower() in PERMALINK_TEXTS and href.startswith("#"):
        return not any(child.tag == "img" for child in el.iter())
    return False


# a Python class in the compiled build too (docs/compiled.md): its `__call__` is
# `dict.__getitem__`, which a native class cannot take
@mypyc_attr(native_class=False)
class ChromeMemo(dict[etree._Element, bool]):
    """`is_chrome` remembered per element, for one walk over a tree that does not change.

    Walkers ask about the same element several times (block or inline? its text? its
    links?); the memo answers the repeats with a dict lookup. Calling the memo is
    `dict.__getitem__` (no Python frame on a repeat); a first question goes through
    `__missing__`.
    """

    __slots__ = ()
    __call__ = dict.__getitem__

    def __init__(self, excluded: Iterable[etree._Element] = ()) -> None:
        """`excluded` elements count as chrome whatever they look like (site profiles)."""
        super().__init__(dict.fromkeys(excluded, True))

    def __missing__(self, el: etree._Element) -> bool:
        found = self[el] = is_chrome(el)
        return found


def visible_text(
    el: etree._Element, *, skip_chrome: bool = True,
    chrome: Callable[[etree._Element], bool] = is_chrome,
) -> str:
    """Text of `el` with chrome subtrees skipped and whitespace collapsed.

    Most elements asked (a code span, a table, a list the renderer just walked, so each
    element's chrome verdict is a memo hit) hold no chrome and no line break: their text
    is then libxml2's text serialization (comments left out, tails kept, as the walk
    does), without the walk."""
    if el.tag == "br":  # a line break is a space: nothing once stripped
        return ""
    if not len(el):  # a leaf: its own text
        return collapse(el.text or "").strip(_EDGE)
    for node in el.iterdescendants():
        tag = node.tag
        if not isinstance(tag, str):
            continue
        if tag == "br":
            return _walked_text(el, skip_chrome, chrome)
        if skip_chrome and chrome(node):
            if chrome is is_chrome:  # no memo: the walk must not judge this node again
                chrome = ChromeMemo((node,))
            return _walked_text(el, skip_chrome, chrome)
    return collapse(etree.tostring(el, method="text", encoding=str, with_tail=False)
                    ).strip(_EDGE)


_EDGE = " " + ZERO_WIDTH  # stripped from both ends of a visible text


def _walked_text(el: etree._Element, skip_chrome: bool,
                 chrome: Callable[[etree._Element], bool]) -> str:
    """`visible_text` by walking the subtree: chrome skipped, a `br` as a space."""
    parts: list[str] = []
    add = parts.append
    stack: list[etree._Element | str] = [el]
    pop, push = stack.pop, stack.append
    while stack:  # iterative: real pages can nest deeper than Python's recursion limit
        node = pop()
        if isinstance(node, str):
            add(node)
            continue
        tag = node.tag
        if node is not el and (not isinstance(tag, str) or (skip_chrome and chrome(node))):
            continue
        if tag == "br":
            add(" ")
            continue
        text = node.text
        if text:
            add(text)
        for child in reversed(node):
            tail = child.tail
            if tail:
                push(tail)
            push(child)
    return collapse("".join(parts)).strip(_EDGE)


def iter_content(
    el: etree._Element, chrome: Callable[[etree._Element], bool] = is_chrome
) -> Iterator[etree._Element]:
    """Descendants of `el` in document order, without chrome subtrees (iterative)."""
    stack = list(reversed(el))
    while stack:
        node = stack.pop()
        if isinstance(node.tag, str) and not chrome(node):
            yield node
            stack.extend(reversed(node))
