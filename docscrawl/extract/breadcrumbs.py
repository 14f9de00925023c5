"""Breadcrumb trails: the visible trail and structured BreadcrumbList data.

Precedence of the preferred trail (`BreadcrumbResult.breadcrumbs`):

1. Both a visible trail and a structured trail (JSON-LD or microdata
   BreadcrumbList) exist and *agree* -> the visible trail, source
   ``visible-and-jsonld``. They agree when their labels are equal after whitespace
   normalisation and case folding, or when they differ only by a leading home item
   (a label in ``HOME_LABELS``) that one of them leaves out: themes often show a
   home icon that JSON-LD omits, or drop an unnamed icon that JSON-LD names.
2. They disagree -> the visible trail when it has at least 2 items, else the
   structured one; both stay in ``observations`` and a ``breadcrumb_disagreement``
   warning names both label lists.
3. Only one of them -> that one (``visible`` or ``jsonld``).
4. Neither -> ``[]`` and source ``none``.

"jsonld" in the output vocabulary means *structured data*: a microdata
BreadcrumbList is reported there too (JSON-LD wins when a page has both).
Positions are renumbered from 1 in trail order (structured items are first
sorted by their declared ``position``). ``url`` is absolute, or None when the
item has no usable link (the current page usually has none).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeAlias
from urllib.parse import urljoin

from lxml import etree

from docscrawl.extract.docindex import DocIndex, select_all
from docscrawl.extract.md_text import collapse
from docscrawl.extract.model import Breadcrumb, ExtractionWarning

__all__ = [
    "BreadcrumbResult",
    "DocIndex",
    "extract_breadcrumbs",
    "select_all",
    "trails_agree",
    "visible_text",
]

Element: TypeAlias = etree._Element

# --- heuristics as data -------------------------------------------------------------

# Visible trail containers, most specific first. The first one that yields at least
# one labelled item wins. CSS (values starting with "/" or "(" would be XPath).
VISIBLE_TRAILS: tuple[tuple[str, str], ...] = (
    # "readcrumb" matches Breadcrumb/breadcrumbs whatever the case of the "b".
    ("aria-label", "nav[aria-label*=readcrumb]"),
    ("sphinx-rtd", "div[role=navigation] ul.wy-breadcrumbs"),
    ("docusaurus", "nav.theme-doc-breadcrumbs"),
    ("pydata", "nav.bd-breadcrumbs, ul.bd-breadcrumbs"),
    ("mkdocs-material", "nav.md-path"),
    ("antora", "nav.breadcrumbs"),
    ("docsy", ".td-breadcrumbs"),
    ("bootstrap", "ol.breadcrumb, ul.breadcrumb"),
    ("microdata", "[itemtype$=BreadcrumbList]"),
    ("javadoc", "div.sub-nav ol.sub-nav-list"),  # JDK 22+ module > package > class trail
    (
        "class-breadcrumb",
        "nav[class*=readcrumb], ol[class*=readcrumb], ul[class*=readcrumb], div[class*=readcrumb]",
    ),
    # Sphinx basic/alabaster/pallets relbar: "Project » Section » Page" plus
    # right-floated "index | modules | next | previous" links, dropped below.
    ("sphinx-related", "div.related"),
)
# Containers whose items are relbar links unless proven otherwise.
RELBAR_CONTAINERS = frozenset({"sphinx-related"})
RELBAR_LABELS = frozenset({"index", "modules", "next", "previous", "next page", "previous page"})
# Items that sit inside a trail but are not part of it.
DROP_ITEM_CLASSES = frozenset({"wy-breadcrumbs-aside", "right", "breadcrumbs-aside"})
DROP_LABEL_RE = re.compile(
    r"^(edit (on|in) (github|gitlab|bitbucket)|edit this page|view page source|view source"
    r"|show source|suggest an? edit|report an? (issue|problem)|improve this page)$",
    re.IGNORECASE,
)
# A "trail" longer than this, or with a longer label, is some other list.
MAX_CRUMBS = 12
MAX_LABEL_CHARS = 120
HOME_LABELS = frozenset({"home", "home page", "homepage", "docs home", "documentation home"})
# Glyphs used as separators between crumbs; stripped from label edges.
SEPARATORS = "»›>/|·•→⟩«‹<\\"
# Subtrees that never contribute visible text.
HIDDEN_TAGS = frozenset({"script", "style", "template", "noscript", "svg", "head", "title"})
HIDDEN_CLASSES = frozenset(
    {"sr-only", "visually-hidden", "screen-reader-text", "screenreader-only", "hidden"}
)
# Inline children that can be crumbs when a trail is not a list.
INLINE_CRUMB_TAGS = frozenset({"a", "span", "strong", "b", "em"})
STRUCTURED_SYNTAXES = ("json-ld", "microdata")
# Outermost microdata BreadcrumbList scopes.
MICRODATA_LISTS = etree.XPath(
    "//*[@itemscope][contains(@itemtype, 'BreadcrumbList')]"
    "[not(ancestor::*[@itemscope][contains(@itemtype, 'BreadcrumbList')])]"
)



@dataclass(slots=True)
class BreadcrumbResult:
    """Preferred trail, where it came from, the raw trails and any warnings."""

    breadcrumbs: list[Breadcrumb] = field(default_factory=list)
    source: str = "none"  # visible, jsonld, visible-and-jsonld, none
    observations: dict[str, list[Breadcrumb]] = field(
        default_factory=lambda: {"visible": [], "jsonld": []}
    )
    warnings: list[ExtractionWarning] = field(default_factory=list)


# --- text helpers -------------------------------------------------------------------


def _is_hidden(el: Element) -> bool:
    if not isinstance(el.tag, str):
        return True  # comments, processing instructions
    if el.tag.lower() in HIDDEN_TAGS:
        return True
    if el.get("aria-hidden", "").lower() == "true" or el.get("hidden") is not None:
        return True
    return bool(HIDDEN_CLASSES.intersection((el.get("class") or "").split()))


def _iter_text(el: Element, skip: Callable[[Element], bool] | None) -> Iterator[str]:
    if el.text:
        yield el.text
    for child in el:
        if not (_is_hidden(child) or (skip is not None and skip(child))):
            yield from _iter_text(child, skip)
        if child.tail:
            yield child.tail


def visible_text(el: Element, skip: Callable[[Element], bool] | None = None) -> str:
    """Whitespace-normalised text of `el`, leaving out hidden subtrees and `skip` ones."""
    if _is_hidden(el):
        return ""
    return collapse("".join(_iter_text(el, skip)))


def _strip_separators(text: str) -> str:
    """Drop separator glyphs at the edges ("» Page", "Page /", "›Page"), but keep angle
    brackets that pair inside the label (CMake's `<LANG>_FLAGS`)."""
    text = collapse(text)
    lead = SEPARATORS.replace("<", "") if ">" in text else SEPARATORS
    trail = SEPARATORS.replace(">", "") if "<" in text else SEPARATORS
    return collapse(text.lstrip(lead + " ").rstrip(trail + " "))


def _attr_label(el: Element) -> str:
    """Authored accessible name of an icon-only crumb (aria-label, title, img alt)."""
    for node in el.iter():
        if not isinstance(node.tag, str):
            continue
        for attr in ("aria-label", "title", "alt"):
            value = collapse(node.get(attr) or "")
            if value:
                return value
    return ""


def _absolute(href: str | None, base_url: str) -> str | None:
    href = (href or "").strip()
    if not href or href.startswith(("#", "javascript:")):
        return None
    try:
        return urljoin(base_url, href)
    except ValueError:
        return None


# --- visible trail ------------------------------------------------------------------


def _outer_items(container: Element) -> list[Element]:
    """List items of the trail (not nested ones), or inline crumbs when there is no list."""
    items = []
    for li in container.iter("li"):
        parent_li = next(li.iterancestors("li"), None)
        if parent_li is None or not _within(parent_li, container):
            items.append(li)
    if items:
        return items
    children = list(container)
    while len(children) == 1 and children[0].tag in ("div", "ol", "ul", "p"):
        children = list(children[0])
    return [c for c in children if isinstance(c.tag, str) and c.tag in INLINE_CRUMB_TAGS]


def _within(el: Element, container: Element) -> bool:
    return any(anc is container for anc in el.iterancestors())


def _crumb(item: Element, base_url: str) -> tuple[Breadcrumb | None, str | None]:
    """One visible crumb (None when not part of the trail), and the link of an
    unlabelled crumb that had to be dropped."""
    if DROP_ITEM_CLASSES.intersection((item.get("class") or "").split()):
        return None, None
    link = item if item.tag == "a" else next(iter(item.iter("a")), None)
    url = _absolute(link.get("href") if link is not None else None, base_url)
    # An icon-only crumb keeps its accessible name only when it is a link: a bare
    # logo image in a relbar is decoration.
    label = _strip_separators(visible_text(item)) or (_attr_label(link) if link is not None else "")
    if not label:
        return None, url
    if DROP_LABEL_RE.match(label):
        return None, None
    return Breadcrumb(position=0, label=label, url=url), None


def _visible_trail(
    root: Element, base_url: str, warnings: list[ExtractionWarning],
    index: DocIndex | None = None, selectors: tuple[str, ...] = (),
) -> list[Breadcrumb]:
    """First visible trail found: site-profile `selectors`, then `VISIBLE_TRAILS` order."""
    index = index or DocIndex.of(root)
    for name, selector in (*(("profile", css) for css in selectors), *VISIBLE_TRAILS):
        for container in index.select(selector):
            items = _outer_items(container)
            if len(items) > MAX_CRUMBS + 2:  # + room for an aside and a home icon
                continue
            pairs = [_crumb(item, base_url) for item in items]
            if name in RELBAR_CONTAINERS:
                # "index", "next"... are relbar links, unless Sphinx marks the item as a
                # trail item (`li.nav-item`: the genindex page's own crumb is "Index").
                pairs = [
                    (None, None) if crumb is not None and not _is_trail_item(item)
                    and crumb.label.casefold() in RELBAR_LABELS else (crumb, dropped)
                    for (crumb, dropped), item in zip(pairs, items, strict=True)
                ]
            crumbs = [c for c, _ in pairs if c]
            if crumbs and any(len(c.label) > MAX_LABEL_CHARS for c in crumbs):
                continue
            if crumbs:
                for _, dropped in pairs:
                    if dropped:
                        detail = f"visible crumb linking to {dropped} has no label; dropped"
                        warnings.append(ExtractionWarning("breadcrumb_unlabelled_item", detail))
                return _renumber(crumbs)
    return []


def _is_trail_item(item: Element) -> bool:
    return "nav-item" in (item.get("class") or "").split()


def _renumber(crumbs: Iterable[Breadcrumb]) -> list[Breadcrumb]:
    return [Breadcrumb(position=i, label=c.label, url=c.url) for i, c in enumerate(crumbs, 1)]


# --- structured trails --------------------------------------------------------------


def _type_names(obj: dict[str, Any]) -> set[str]:
    raw = obj.get("@type", obj.get("type"))
    names = raw if isinstance(raw, list) else [raw]
    return {re.split(r"[/#:]", n)[-1] for n in names if isinstance(n, str)}


def _walk_lists(data: Any) -> Iterator[dict[str, Any]]:
    """Every BreadcrumbList object, at any depth (`@graph`, `WebPage.breadcrumb`...)."""
    if isinstance(data, list):
        for value in data:
            yield from _walk_lists(value)
    elif isinstance(data, dict):
        if "BreadcrumbList" in _type_names(data):
            yield data
            return
        for value in data.values():
            yield from _walk_lists(value)


def _first_str(value: Any) -> str | None:
    if isinstance(value, list):
        value = next((v for v in value if isinstance(v, str)), None)
    return collapse(value) if isinstance(value, str) and value.strip() else None


def _position(value: Any) -> float | None:
    if isinstance(value, (int, float)):
        return float(value)
    text = _first_str(value)
    try:
        return float(text) if text is not None else None
    except ValueError:
        return None


def _structured_trail(
    blist: dict[str, Any], base_url: str, warnings: list[ExtractionWarning]
) -> list[Breadcrumb]:
    """Normalise one BreadcrumbList (dict or list `itemListElement`, string positions)."""
    elements = blist.get("itemListElement") or []
    if isinstance(elements, dict):
        elements = [elements]
    rows: list[tuple[float | None, int, Breadcrumb]] = []
    for index, element in enumerate(elements if isinstance(elements, list) else []):
        if not isinstance(element, dict):
            continue
        item = element.get("item")
        name = _first_str(element.get("name"))
        url = _first_str(element.get("url")) or _first_str(element.get("@id"))
        if isinstance(item, dict):
            name = name or _first_str(item.get("name"))
            url = _first_str(item.get("@id")) or _first_str(item.get("url")) or url
        elif item is not None:
            url = _first_str(item) or url
        if not name:
            detail = f"structured item {url!r} has no name"
            warnings.append(ExtractionWarning("breadcrumb_unlabelled_item", detail))
            continue
        crumb = Breadcrumb(position=0, label=name, url=_absolute(url, base_url))
        rows.append((_position(element.get("position")), index, crumb))
    rows.sort(key=lambda r: (r[0] is None, r[0] or 0.0, r[1]))
    return _renumber(r[2] for r in rows)


def _extruct(
    document: Any, syntax: str, base_url: str, warnings: list[ExtractionWarning]
) -> list[Any]:
    import extruct  # here, not at the top: `docscrawl search` imports this module's helpers

    try:
        data = extruct.extract(document, base_url=base_url, syntaxes=[syntax], uniform=True)
    except Exception as exc:  # extruct raises whatever its parsers raise
        warnings.append(ExtractionWarning("structured_data_error", f"{syntax}: {exc}"))
        return []
    return list(data.get(syntax, []))


def _has_json_ld(root: Element) -> bool:
    """True when extruct's JSON-LD query (`descendant-or-self::script[@type=
    "application/ld+json"]`) finds something: without such a script it answers nothing,
    and most documentation pages have none (extruct's call costs more than this look)."""
    return any(script.get("type") == "application/ld+json" for script in root.iter("script"))


def _structured_data(
    root: Element | None, html: str | None, base_url: str, warnings: list[ExtractionWarning],
    index: DocIndex | None = None,
) -> list[Any]:
    """extruct items (JSON-LD first, then microdata) from the parsed tree.

    Microdata runs on BreadcrumbList scopes only: on a whole page it would also turn
    every other item (the Read the Docs theme's article-wide ``Article``) into text,
    which costs several parses. The HTML text is used only when there is no tree. The
    page's `index` (its `itemtype` values) spares the query for those scopes on a page
    without any.
    """
    if root is None:
        if html is None:
            return []
        return [_extruct(html, syntax, base_url, warnings) for syntax in STRUCTURED_SYNTAXES]
    found = [_extruct(root, "json-ld", base_url, warnings) if _has_json_ld(root) else []]
    lists = index is None or any("BreadcrumbList" in v for v in index.values["itemtype"])
    for scope in MICRODATA_LISTS(root) if lists else ():
        found.append(_extruct(scope, "microdata", base_url, warnings))
    return found


def _structured_trails(
    root: Element | None, html: str | None, base_url: str, warnings: list[ExtractionWarning],
    index: DocIndex | None = None,
) -> list[list[Breadcrumb]]:
    trails: list[list[Breadcrumb]] = []
    for items in _structured_data(root, html, base_url, warnings, index):
        for blist in _walk_lists(items):
            trail = _structured_trail(blist, base_url, warnings)
            if trail:
                trails.append(trail)
    return trails


# --- choosing -----------------------------------------------------------------------


def _labels(trail: list[Breadcrumb]) -> list[str]:
    return [collapse(c.label).casefold() for c in trail]


def _without_home(labels: list[str]) -> list[str]:
    return labels[1:] if labels and labels[0] in HOME_LABELS else labels


def trails_agree(visible: list[Breadcrumb], structured: list[Breadcrumb]) -> bool:
    """Labels equal (case-insensitive), a leading home item on either side aside."""
    v, s = _labels(visible), _labels(structured)
    return v == s or _without_home(v) == _without_home(s)


def _label_list(trail: list[Breadcrumb]) -> str:
    return " > ".join(c.label for c in trail) or "(empty)"


def extract_breadcrumbs(
    root: Element | None, html: str | None, base_url: str, *, index: DocIndex | None = None,
    selectors: tuple[str, ...] = (),
) -> BreadcrumbResult:
    """Visible and structured breadcrumb trails of a page, and the preferred one.

    `root` is the parsed tree (`parsel.Selector(text=html).root`); `html` is only
    used for structured data when no tree is given. The tree is never modified.
    """
    result = BreadcrumbResult()
    visible: list[Breadcrumb] = []
    if root is not None:
        visible = _visible_trail(root, base_url, result.warnings, index, selectors)
    trails = _structured_trails(root, html, base_url, result.warnings, index)
    structured = trails[0] if trails else []
    distinct = {tuple(_labels(t)) for t in trails}
    if len(distinct) > 1:
        detail = "; ".join(_label_list(t) for t in trails)
        result.warnings.append(ExtractionWarning("breadcrumb_multiple_structured", detail))
    result.observations = {"visible": visible, "jsonld": structured}

    if visible and structured:
        if trails_agree(visible, structured):
            result.breadcrumbs, result.source = visible, "visible-and-jsonld"
        else:
            detail = f"visible: {_label_list(visible)} | jsonld: {_label_list(structured)}"
            result.warnings.append(ExtractionWarning("breadcrumb_disagreement", detail))
            if len(visible) >= 2:
                result.breadcrumbs, result.source = visible, "visible"
            else:
                result.breadcrumbs, result.source = structured, "jsonld"
    elif visible:
        result.breadcrumbs, result.source = visible, "visible"
    elif structured:
        result.breadcrumbs, result.source = structured, "jsonld"
    return result
