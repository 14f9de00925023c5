"""Section path: labels of the active trail in the sidebar documentation tree.

Find the current item in a known sidebar (`SIDEBARS`, most specific first) with the
`ACTIVE_ITEMS` markers, take the deepest marked element in that sidebar, then walk
up its ancestor items (`li`, VitePress `.VPSidebarItem`) collecting each level's
own label (its first labelled element, nested lists left out). A Sphinx caption
(`p.caption`) right before the outermost list is the first level. The result ends
with the current page's own label. `[]` when no sidebar has an active item.
"""

from __future__ import annotations

from typing import TypeAlias

from lxml import etree

from docscrawl.extract.breadcrumbs import DocIndex, visible_text
from docscrawl.extract.md_text import collapse

__all__ = ["active_sidebar_trail"]

Element: TypeAlias = etree._Element

# Active-item markers, strongest first; the deepest match in a sidebar wins.
ACTIVE_ITEMS: tuple[str, ...] = (
    "[aria-current=page]",
    "a.md-nav__link--active, label.md-nav__link--active",
    "a.menu__link--active",
    ".VPSidebarItem.is-active",
    "li.toctree-l1.current > a, li.current > a, a.current",
    "a.active, li.active > a",
    "a.is-active, a.current-page, .is-current-page > a, a.sidebar-active",
)
# The mkdocs/readthedocs built-in themes keep the doc tree in the top bar; only their
# own markers count there, so any Bootstrap navbar's active "Home" is not a trail.
MKDOCS_NAVBAR_ACTIVE = ("a.dropdown-item.active", "li.navitem.active > a")
# Sidebar documentation trees, most specific first: (name, container, active markers).
SIDEBARS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("sphinx-rtd", ".wy-menu-vertical", ACTIVE_ITEMS),
    ("mkdocs-material", "nav.md-nav--primary", ACTIVE_ITEMS),
    ("docusaurus", "nav.menu, .theme-doc-sidebar-menu", ACTIVE_ITEMS),
    ("vitepress", ".VPSidebar, aside.VPSidebar", ACTIVE_ITEMS),
    ("mdbook", "#sidebar .sidebar-scrollbox, nav#sidebar, .sidebar ol.chapter", ACTIVE_ITEMS),
    ("pydata", ".bd-sidebar-primary, nav.bd-docs-nav", ACTIVE_ITEMS),
    ("furo", ".sidebar-tree", ACTIVE_ITEMS),
    ("sphinx-basic", "div.sphinxsidebar", ACTIVE_ITEMS),
    ("rustdoc", "nav.sidebar, .sidebar-elems", ACTIVE_ITEMS),
    ("docsy", ".td-sidebar-nav", ACTIVE_ITEMS),
    ("antora", "nav.nav-menu", ACTIVE_ITEMS),
    ("starlight", "nav[aria-label=Main] ul.top-level, #starlight__sidebar", ACTIVE_ITEMS),
    ("gitbook", "nav.book-summary, .book-summary", ACTIVE_ITEMS),
    ("docsify", ".sidebar-nav", ACTIVE_ITEMS),
    ("mkdocs-navbar", "ul.navbar-nav", MKDOCS_NAVBAR_ACTIVE),
    (
        "generic-aside",
        "aside, [role=navigation][class*=sidebar], [class*=sidenav]",
        ACTIVE_ITEMS,
    ),
)
# An "item" of the tree: one level of the trail.
ITEM_XPATH = etree.XPath(
    "ancestor-or-self::*[self::li or contains(concat(' ', normalize-space(@class), ' '),"
    " ' VPSidebarItem ')]"
)
# Nested lists inside an item hold its children, not its label.
SUBLIST_TAGS = frozenset({"ul", "ol", "nav"})
SUBLIST_CLASSES = frozenset({"items", "menu__list", "md-nav"})
LABEL_TAGS = frozenset(
    {"a", "span", "label", "button", "p", "strong", "em", "h2", "h3", "h4", "h5", "h6", "div"}
)
# Elements inside a sidebar that are in-page tables of contents, never the trail.
TOC_CLASSES = frozenset({"md-nav--secondary", "toc", "table-of-contents", "bd-toc"})
CAPTION_CLASSES = frozenset({"caption"})


def _classes(el: Element) -> set[str]:
    return set((el.get("class") or "").split())


def _is_sublist(el: Element) -> bool:
    return el.tag in SUBLIST_TAGS or bool(SUBLIST_CLASSES & _classes(el))


def _item_label(item: Element) -> str:
    """The item's own label: its first labelled element, nested lists skipped."""
    stack = [child for child in reversed(item) if isinstance(child.tag, str)]
    while stack:
        el = stack.pop()
        if _is_sublist(el):
            continue
        if el.tag in LABEL_TAGS:
            text = visible_text(el, skip=_is_sublist)
            if text:
                return text
        stack.extend(c for c in reversed(el) if isinstance(c.tag, str))
    return collapse(item.text or "")


def _in_toc(el: Element, sidebar: Element) -> bool:
    for anc in el.iterancestors():
        if anc is sidebar:
            return False
        if TOC_CLASSES & _classes(anc):
            return True
    return False


def _depth(el: Element) -> int:
    return len(ITEM_XPATH(el))


def _active_element(sidebar: Element, markers: tuple[str, ...],
                    index: DocIndex) -> Element | None:
    """Deepest active marker in `sidebar` (first in document order on ties); a marker the
    document's index rules out is not run."""
    for selector in markers:
        found = [el for el in index.select_in(sidebar, selector) if not _in_toc(el, sidebar)]
        if found:
            return max(found, key=_depth)  # max keeps the first of equal depths
    return None


def _caption(item: Element) -> str | None:
    """Sphinx-style caption heading the list that holds the outermost item."""
    parent = item.getparent()
    prev = parent.getprevious() if parent is not None else None
    while prev is not None and not isinstance(prev.tag, str):
        prev = prev.getprevious()
    if prev is not None and (CAPTION_CLASSES & _classes(prev) or prev.get("role") == "heading"):
        return visible_text(prev) or None
    return None


def _trail(active: Element, sidebar: Element) -> list[str]:
    items = [el for el in ITEM_XPATH(active) if el is not sidebar and _inside(el, sidebar)]
    labels: list[str] = []
    for item in items:
        label = _item_label(item)
        if not label:
            # mdBook nests a section's children in a label-less sibling <li>.
            prev = item.getprevious()
            label = _item_label(prev) if prev is not None and prev.tag == "li" else ""
        if label and (not labels or labels[-1] != label):
            labels.append(label)
    if not items and (text := visible_text(active)):
        labels.append(text)
    if items and (caption := _caption(items[0])):
        labels.insert(0, caption)
    return labels


def _inside(el: Element, container: Element) -> bool:
    return any(anc is container for anc in el.iterancestors())


def active_sidebar_trail(
    root: Element, base_url: str, *, index: DocIndex | None = None
) -> list[str]:
    """Labels from the sidebar root down to the current page; [] when none is active.

    `base_url` is accepted for symmetry with the other extractors (not needed yet).
    """
    del base_url
    index = index or DocIndex.of(root)
    for _name, selector, markers in SIDEBARS:
        for sidebar in index.select(selector):
            active = _active_element(sidebar, markers, index)
            if active is not None:
                trail = _trail(active, sidebar)
                if trail:
                    return trail
    return []
