"""Class selectors answered from the page's class attributes instead of a tree walk.

A CSS selector costs a walk of every node of the page through libxml2's node sets (50-90
us on a documentation page), whatever it finds. The selectors of the generator profiles
and the sidebar markers are mostly one compound with a class (`div.related`,
`div.body[role=main]`, `a.current`): every element they select carries that class. The
page's class attributes are read anyway, in document order, with their elements
(`docindex._attributes`); the elements whose attribute holds the compound's rarest class
name as a substring are found in their joined text (`str.find`, `str.count` of the
separators before a hit), and each is tested against the whole
compound as cssselect's translation tests it (its tag; each class between the spaces
XPath's `normalize-space` knows; attribute tests by the translation itself, anchored on
the element: `self::`). A compound's children of one tag (`li.current > a`) are read from
the elements found. The same elements, in the same order, as the walk
(`tests/extract/test_docindex.py` compares them on real manuals); anything else (other
combinators, pseudo-classes, escapes) is walked.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from cssselect import HTMLTranslator
from lxml import etree

from docscrawl.extract.tree import document_position

__all__ = ["ClassedElements", "compounds"]

# One compound: an optional tag, one or more classes, attribute tests with plain values;
# optionally its children of one tag (`li.current > a`).
_COMPOUND = re.compile(
    r"\s*(?P<compound>(?:[a-zA-Z][a-zA-Z0-9-]*)?((?:\.[a-zA-Z_-][\w-]*)+)"
    r"(?:\[[a-zA-Z_-][\w-]*(?:[~|^$*]?=(?:\"[^\"\\]*\"|'[^'\\]*'|[\w-]+))?\])*)"
    r"(?:\s*>\s*(?P<child>[a-zA-Z][a-zA-Z0-9-]*))?\s*")
_CLASS_NAME = re.compile(r"\.([\w-]+)")
SEPARATOR = "\x00"  # between the joined class values (no attribute value holds one)


# The whitespace XPath's `normalize-space` knows (cssselect's class test splits on it)
_XPATH_SPACES = str.maketrans("\t\n\r", "   ")


@dataclass(frozen=True, slots=True)
class Compound:
    """A one-compound class selector: its tag and classes, tested in Python as cssselect's
    translation tests them; its attribute tests (if any) by that translation itself."""

    names: tuple[str, ...]  # its classes: each a substring of a matching class attribute
    tag: str | None  # lowered, as HTMLTranslator lowers it
    classes: tuple[str, ...]  # the names padded with spaces: " name "
    test: etree.XPath | None  # cssselect's translation anchored on the element (`self::`)
    child: str | None = None  # the selector's elements are the match's children of this tag

    def matches(self, el: Any, value: str) -> bool:
        """Whether `el`, whose class attribute is `value`, is one of the compound's."""
        if self.tag is not None and el.tag != self.tag:
            return False
        padded = f" {value.translate(_XPATH_SPACES)} "
        for name in self.classes:
            if name not in padded:
                return False
        return self.test is None or bool(self.test(el))


@lru_cache(maxsize=512)
def compounds(selector: str) -> tuple[Compound, ...] | None:
    """The compounds of a selector group made only of class compounds, None otherwise
    (a comma that may be no separator, a combinator, a pseudo-class...: walked)."""
    if any(c in selector for c in "()\\\"'"):
        return None
    found = []
    for part in selector.split(","):
        match = _COMPOUND.fullmatch(part)
        if match is None:
            return None
        compound = match["compound"]
        head, bracket, _ = compound.partition("[")
        names = _CLASS_NAME.findall(head)
        tag = head.split(".", 1)[0].lower() or None
        test = (etree.XPath(HTMLTranslator().css_to_xpath(compound, prefix="self::"))
                if bracket else None)  # attribute tests: cssselect's own
        child = match["child"].lower() if match["child"] else None  # HTML names, lowered
        found.append(Compound(tuple(names), tag, tuple(f" {n} " for n in names), test, child))
    return tuple(found)


@dataclass(slots=True)
class ClassedElements:
    """The page's elements with a class attribute and its values, in document order."""

    elements: list[Any] = field(default_factory=list)
    values: list[str] = field(default_factory=list)
    _joined: str | None = None  # the values joined by SEPARATOR, made on first use

    def select(self, context: Any, group: tuple[Compound, ...], whole: bool) -> list[Any]:
        """The elements of `group` in `context`'s subtree (itself included), in document
        order; `whole`: `context` is the document's root element (no subtree test)."""
        if self._joined is None:
            self._joined = SEPARATOR.join(self.values)
        joined, elements, values = self._joined, self.elements, self.values
        found: set[int] = set()
        children: dict[Any, None] = {}  # of the compounds with a child tag, unordered
        for compound in group:
            # the compound's rarest class on this page: the fewest values to test
            needle = (min(compound.names, key=joined.count) if len(compound.names) > 1
                      else compound.names[0])
            index = pos = 0  # the value that starts at `pos`
            at = joined.find(needle)
            while at >= 0:
                index += joined.count(SEPARATOR, pos, at)
                el = elements[index]
                if compound.child is not None:
                    if compound.matches(el, values[index]) and (whole or _within(el, context)):
                        children.update(dict.fromkeys(el.iterchildren(compound.child)))
                elif index not in found and compound.matches(el, values[index]):
                    found.add(index)
                end = joined.find(SEPARATOR, at)
                if end < 0:
                    break
                index, pos = index + 1, end + 1
                at = joined.find(needle, pos)
        chosen = [elements[index] for index in sorted(found)]
        if not whole:
            chosen = [el for el in chosen if _within(el, context)]
        if children:  # the union in document order, as the walk gives it
            return sorted(dict.fromkeys([*chosen, *children]), key=document_position)
        return chosen


def _within(el: Any, context: Any) -> bool:
    """`el` is `context` or lies inside it."""
    return el is context or any(a is context for a in el.iterancestors())
