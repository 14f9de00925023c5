"""What a parsed page contains, for cheap selector pre-checks and selections.

`DocIndex.of(root)` records class tokens, ids, some attribute values and the names of
the attributes present (one pass over the elements), the elements with a class (for
`classmatch`), the tag names (on demand), and the raw material of generator
fingerprints (script sources, stylesheet links, comments, inline script heads).
Extractors share one index per page (`page.page_structure` builds it) instead of walking
the tree again; it keeps the page's CSS answers too (`css`, `select_in`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, NamedTuple, TypeAlias

from lxml import etree
from lxml.cssselect import CSSSelector

from docscrawl.extract.classmatch import ClassedElements, Compound, compounds
from docscrawl.extract.profiles import BARE_TAG, find_tag, select
from docscrawl.extract.tree import document_position

__all__ = ["DocIndex", "select_all"]

Element: TypeAlias = etree._Element
INLINE_SCRIPT_CHARS = 4000


@lru_cache(maxsize=256)
def _compiled(selector: str) -> Callable[[Element], Any]:
    if selector.startswith(("/", "(")):
        return etree.XPath(selector)
    if BARE_TAG.fullmatch(selector):
        return find_tag(selector)
    return CSSSelector(selector, translator="html")


_BRACKETS_RE = re.compile(r"\[([\w:-]+)\s*(?:([*$^~|]?=)\s*['\"]?([^'\"\]]*)['\"]?)?\]")
_CLASS_RE = re.compile(r"\.([\w-]+)")
_ID_RE = re.compile(r"#([\w-]+)")
_TAG_RE = re.compile(r"(?:^|[\s>+~])([a-zA-Z][\w-]*)")
# Attributes whose values the index keeps, so `[attr*=value]` can be pre-checked.
INDEXED_VALUES = ("aria-label", "role", "itemtype")


def _attributes(doc_root: Element
                ) -> tuple[frozenset[str], dict[str, list[str]], ClassedElements]:
    """The names of the attributes the document's elements carry, the values of `class`,
    `id` and INDEXED_VALUES in document order (what `//@class` and the like select), and
    the elements with a class attribute. One walk in Python: each `//@name` query walks
    every node of the document in C, but through libxml2's node-set machinery (about 80 us
    a page each, nine a page), where this pass reads the few attributes of each element
    once (docs/performance.md)."""
    values: dict[str, list[str]] = {name: [] for name in _KEPT}
    kept = values.get
    names: set[str] = set()
    classed = ClassedElements(values=values["class"])
    class_values, class_elements = classed.values, classed.elements
    for el in doc_root.iter(etree.Element):
        for name, value in el.items():
            found = kept(name)
            if found is None:
                names.add(name)
            else:
                found.append(value)
                if found is class_values:
                    class_elements.append(el)
    names.update(name for name, found in values.items() if found)
    return frozenset(names), values, classed


_KEPT = ("class", "id", *INDEXED_VALUES)  # the attributes whose values `_attributes` keeps
_ANCHOR_NAMES = etree.XPath("//a/@name", smart_strings=False)  # `a[name]` values


def _comments(doc_root: Element) -> list[str]:
    """The text of every comment of the document, in order: those around the root
    element (a generator's banner before `<html>`) and those inside it."""
    before = list(doc_root.itersiblings(etree.Comment, preceding=True))
    before.reverse()
    found = [*before, *doc_root.iter(etree.Comment),
             *doc_root.itersiblings(etree.Comment)]
    return [comment.text for comment in found if comment.text]


class TagSet:
    """The element names of a document, answered on demand (`name in tags`): a C-level
    search per name asked (instant for a name the document's dictionary lacks), cached,
    instead of a Python pass over every element."""

    __slots__ = ("_found", "_root")

    def __init__(self, root: Element) -> None:
        self._root = root
        self._found: dict[str, bool] = {}

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        found = self._found.get(name)
        if found is None:
            found = next(self._root.iter(name), None) is not None
            self._found[name] = found
        return found


@dataclass(frozen=True, slots=True)
class DocIndex:
    """Tags, class tokens, ids and some attribute values of a document.

    Running a CSS selector costs a full tree walk; `select` skips the walk when the
    selector cannot match (a class, id, tag or attribute it needs is absent), and class
    selectors are answered from the class attributes (`classmatch`).
    """

    root: Element
    tags: TagSet
    classes: frozenset[str]
    ids: frozenset[str]
    values: dict[str, frozenset[str]]
    script_srcs: tuple[str, ...] = ()
    inline_scripts: tuple[str, ...] = ()  # first INLINE_SCRIPT_CHARS of each
    stylesheets: tuple[str, ...] = ()  # `link` hrefs
    comments: tuple[str, ...] = ()
    attributes: frozenset[str] = frozenset()  # the names of the attributes elements carry
    classed: ClassedElements = field(default_factory=ClassedElements)
    _anchor_names: list[frozenset[str]] = field(default_factory=list)  # read on demand
    # answers of `select_in` and `css` by (element, CSS selector)
    _selected: dict[tuple[Element, str], list[Any]] = field(default_factory=dict)

    def has_attr(self, name: str) -> bool:
        """True when some element carries attribute `name`."""
        return name in self.attributes

    def anchor_names(self) -> frozenset[str]:
        """The `name`s of the document's `a` elements (`//a/@name`), read once: the
        fragment checks and the linked notes both ask (no walk without a `name`)."""
        if not self._anchor_names:
            self._anchor_names.append(frozenset(_ANCHOR_NAMES(self.root))
                                      if self.has_attr("name") else frozenset())
        return self._anchor_names[0]

    @classmethod
    def of(cls, root: Element) -> DocIndex:
        # Attributes in one pass over the elements (`_attributes`); tag names are asked
        # for on demand (`TagSet`). Scripts, stylesheet links and comments: `iter(tag)`
        # (C) is faster than `//tag`.
        doc_root = root.getroottree().getroot()
        attributes, values, classed = _attributes(doc_root)
        classes = frozenset(" ".join(values["class"]).split())
        scripts = list(doc_root.iter("script"))
        return cls(
            root, TagSet(root), classes, frozenset(values["id"]),
            {name: frozenset(values[name]) for name in INDEXED_VALUES},
            tuple(src for script in scripts if (src := script.get("src")) is not None),
            tuple(script.text[:INLINE_SCRIPT_CHARS] for script in scripts
                  if script.text and script.get("src") is None),
            tuple(href for link in doc_root.iter("link")
                  if (href := link.get("href")) is not None),
            tuple(_comments(doc_root)),
            attributes,
            classed,
        )

    def in_order(self, elements: Any) -> list[Element]:
        """`elements` of this document sorted in document order."""
        return sorted(elements, key=document_position)

    def _attr_ok(self, name: str, op: str | None, value: str) -> bool:
        if not self.has_attr(name):
            return False
        if name == "class" and op == "*=":
            return any(value in token for token in self.classes)
        if name not in self.values or not op:
            return True
        if op == "=":
            return value in self.values[name]
        return any(value in v for v in self.values[name])  # loose: never a false "no"

    def _part_ok(self, part: str) -> bool:
        needs = _needs(part)
        for name, op, value in needs.attributes:
            if not self._attr_ok(name, op or None, value):
                return False
        return (
            self.classes.issuperset(needs.classes)
            and self.ids.issuperset(needs.ids)
            and all(tag in self.tags for tag in needs.tags)
        )

    def may_match(self, selector: str) -> bool:
        """False only when `selector` certainly matches nothing (XPath: always True)."""
        if selector.startswith(("/", "(")):
            return True
        return any(self._part_ok(part) for part in selector.split(","))

    def live(self, selector: str) -> str | None:
        """`selector` without its comma-separated parts that cannot match (`may_match`
        part by part), None when none can: the same elements (a group selects the union of
        its parts, in document order) for fewer tree walks. Kept whole when a comma might
        not separate parts (quotes, parentheses, escapes)."""
        if selector.startswith(("/", "(")):
            return selector
        parts = selector.split(",")
        live = [part for part in parts if self._part_ok(part)]
        if not live:
            return None
        if len(live) == len(parts) or not _PLAIN_GROUP.isdisjoint(selector):
            return selector
        return ", ".join(part.strip() for part in live)

    def select(self, selector: str) -> list[Any]:
        """`select_all(root, selector)` of the parts that may match (`live`)."""
        return self.select_in(self.root, selector)

    def select_in(self, el: Element, selector: str) -> list[Any]:
        """`select_all(el, selector)` for an element of this document, of the parts that
        may match (`live`); a CSS selector's answer is kept for the page (`css`)."""
        if selector.startswith(("/", "(")):
            return select_all(el, selector)
        found = self._selected.get((el, selector))
        if found is None:
            live = self.live(selector)
            found = self._selected[(el, selector)] = (
                self._by_class(el, live) if live is not None else [])
        return found

    def css(self, el: Element, css: str) -> list[Element]:
        """`profiles.select(el, css)`, kept for the page: the region map, the main content
        and the sidebar trail ask some selectors again (a Sphinx page's `div.related` and
        `div.sphinxsidebar`, 50-90 us a walk). A CSS selector selects the same elements
        through `select_in` (the same translation, `live` parts), so both share answers;
        the lists given are not to be changed."""
        found = self._selected.get((el, css))
        if found is None:
            group = compounds(css)
            found = self._selected[(el, css)] = (
                select(el, css) if group is None else self._classed(el, group))
        return found

    def _by_class(self, el: Element, selector: str) -> list[Any]:
        """`select_all(el, selector)`, from the class attributes when the selector is made
        of class compounds (`classmatch`)."""
        group = compounds(selector)
        return select_all(el, selector) if group is None else self._classed(el, group)

    def _classed(self, el: Element, group: tuple[Compound, ...]) -> list[Any]:
        return self.classed.select(el, group, whole=el is self.root.getroottree().getroot())


class _Needs(NamedTuple):
    """What one selector part needs of a document: attribute tests (name, operator,
    value), class tokens, ids and tag names (lowered)."""

    attributes: tuple[tuple[str, str, str], ...]
    classes: tuple[str, ...]
    ids: tuple[str, ...]
    tags: tuple[str, ...]


@lru_cache(maxsize=1024)
def _needs(part: str) -> _Needs:
    """`_Needs` of a selector part, parsed once per crawl: a page asks `may_match` of the
    same few dozen profile selectors, and the regexes cost more than the set lookups."""
    bare = _BRACKETS_RE.sub(" ", part)
    return _Needs(
        tuple(_BRACKETS_RE.findall(part)), tuple(_CLASS_RE.findall(bare)),
        tuple(_ID_RE.findall(bare)), tuple(t.lower() for t in _TAG_RE.findall(bare)),
    )


# Characters with which a comma may be no separator of a group's selectors.
_PLAIN_GROUP = frozenset("()\\\"'")


def select_all(root: Element, selector: str) -> list[Any]:
    """Elements matching a CSS selector (under `root`) or an XPath (as written)."""
    result = _compiled(selector)(root)
    return result if isinstance(result, list) else []


