"""The readers of the site's own vocabulary, one per kind of place that names a section:
a back-of-book index (a run of short, alphabetically sorted lines that each link to a place
on the site: `index_prefixes`, `index_entries`) and an API summary table (a row whose first
cell is a link and whose other cells are prose: `summary_entries`). Pure functions over a
page's Markdown and headings; `sitevocab` learns from what they find.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

# A Markdown link (text may hold backticks and emphasis; no nested brackets). Its
# destination may hold balanced parentheses: Javadoc's member anchors do
# (`StringUtils.html#isBlank(java.lang.CharSequence)`).
MD_LINK = re.compile(
    r"\[((?:[^\[\]]|\[[^\]]*\])*)\]\(((?:[^()\s]|\([^()\s]*\))+)(?:\s+\"[^\"]*\")?\)")
_HEADING_LINE = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_ITEM_SPLIT = re.compile(r"<br\s*/?>", re.I)
_MARKUP = re.compile(r"[*`|]+|^\s*(?:[-+]|\d+\.)\s+|^\s*:\s*")
_ALNUM = re.compile(r"[^\W_]")
_LETTERS = re.compile(r"[A-Za-z]{2}|[^\W\d_]{2}")
_LINK_FIRST = re.compile(r"\s*[*_]*\[")   # an item that opens with its link (emphasis aside)

MIN_ENTRIES = 30        # an index section holds at least this many linked lines
LINKED_SHARE = 0.8      # ... this share of its lines link somewhere (or name a parent term)
MAX_LINE_CHARS = 90     # ... its lines are this short on average (letters and digits)
SORTED_SHARE = 0.75     # ... and its terms are in alphabetical order, pair by pair
MAX_TERM_CHARS = 80     # a longer "term" is a sentence, not an index entry
MAX_TERM_WORDS = 8
SUMMARY_MIN_WORDS = 3   # a table cell with fewer words is a value, not a summary
SUMMARY_MAX_CHARS = 200


def might_hold(raw_line: str) -> bool:
    """Whether a page's JSON line may hold an index or a summary table (enough Markdown
    links, or a table row opening with one): the others' Markdown is never parsed."""
    return raw_line.count("](") >= MIN_ENTRIES or "| [" in raw_line


@dataclass
class Section:
    """The Markdown of one heading's own text (up to the next heading) and its path."""
    path: tuple[str, ...]
    lines: list[str]


def split_sections(markdown: str, headings: list[dict[str, Any]]) -> list[Section]:
    """A page's Markdown cut at its heading lines, each part labelled with the heading's
    path from the page record (`headings`, in document order). When the heading lines
    and the record disagree in number, the path is built from the lines' own levels."""
    lines = markdown.splitlines()
    found: list[tuple[int, int, str]] = []  # line number, level, text
    fenced = False
    for number, line in enumerate(lines):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        match = None if fenced else _HEADING_LINE.match(line)
        if match:
            found.append((number, len(match.group(1)), match.group(2).strip()))
    paths: list[tuple[str, ...]] = []
    if len(found) == len(headings) and all(isinstance(h, dict) for h in headings):
        paths = [tuple(str(p) for p in h.get("path") or [h.get("text", "")]) for h in headings]
    else:
        stack: list[tuple[int, str]] = []
        for _, level, text in found:
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, text))
            paths.append(tuple(t for _, t in stack))
    sections = [Section((), lines[:found[0][0]] if found else lines)]
    for i, (number, _, _) in enumerate(found):
        end = found[i + 1][0] if i + 1 < len(found) else len(lines)
        sections.append(Section(paths[i], lines[number + 1:end]))
    return sections


def _items(lines: Iterable[str]) -> Iterator[str]:
    """The non-blank items of some Markdown lines (Sphinx's genindex joins its entries
    in a table cell with `<br>`; a Texinfo or DocBook index has one per line)."""
    for line in lines:
        for item in _ITEM_SPLIT.split(line):
            if item.strip() and not set(item.strip()) <= set("|-: "):
                yield item


def _plain(item: str) -> str:
    """An item's words outside its links, markup and separators stripped."""
    text = MD_LINK.sub(" ", item)
    text = _MARKUP.sub(" ", text)
    return " ".join(text.replace("|", " ").split()).strip(" ,;:")


def _link_text(text: str) -> str:
    return " ".join(_MARKUP.sub(" ", text).split()).strip(" ,;:")


def _alnum(text: str) -> int:
    return len(_ALNUM.findall(text))


@dataclass
class _Entry:
    term: str
    urls: list[tuple[str, str]]  # (URL, link text)
    top: bool           # a top-level entry (not a sub-entry of the previous term)
    own: str            # the item's own words, without its parent's


def _entries(lines: Iterable[str]) -> Iterator[_Entry]:
    """An index's entries: the term of each item and the places it links to. The term is
    the item's own text (DocBook: "disk space, [Recovering Disk Space](...)") or, when the
    item is all link, the first link's text (Sphinx, Texinfo). A sub-entry (indented, a
    `: ` definition line, or Sphinx's "(class method)") is prefixed with its parent's term;
    a line with no link names the parent of the lines that follow (DocBook)."""
    parent = ""
    for item in _items(lines):
        links = [(_link_text(text), url) for text, url in MD_LINK.findall(item)]
        plain = _plain(item)
        stripped = item.lstrip()
        sub = item[:1].isspace() or stripped.startswith(":")
        if not links:
            if _LETTERS.search(plain) and len(plain) <= MAX_TERM_CHARS:
                parent = plain
            continue
        # the words before an item's first link are its own (DocBook: "disk space,
        # [Recovering Disk Space](...)"); an item that opens with its link is named by it,
        # the words after describe the target (gtk-doc: "[g_abort](...), macro in [...]";
        # Javadoc: "[isBlank(CharSequence)](...) - Static method in class ...")
        own = plain if _LETTERS.search(plain) and not _LINK_FIRST.match(item) else links[0][0]
        if own.startswith("(") and parent:     # Sphinx: "(click.MultiCommand method)"
            term, top = f"{parent.split(' (')[0]} {own}", False
        elif sub and parent:
            term, top = f"{parent} {own}", False
        else:
            term, top, parent = own, True, own
        fragments = [(url, text) for text, url in links if "#" in url]
        yield _Entry(term, fragments or [(url, text) for text, url in links], top, own)


def is_index(lines: list[str]) -> bool:
    """Whether these lines read as a back-of-book index: many short linked items, nearly
    all of them linked, in alphabetical order. A table of contents is short and linked
    too, but in document order; a glossary is sorted but its items are prose."""
    items = list(_items(lines))
    # a link holds "](": the regular expression runs only on the items that may hold one
    has_link = [bool("](" in item and MD_LINK.search(item)) for item in items]
    linked = [item for item, link in zip(items, has_link, strict=True) if link]
    if len(linked) < MIN_ENTRIES:
        return False
    # an item of at most MAX_TERM_CHARS characters has at most as many letters and digits
    # once stripped (stripping never lengthens it): only a longer one is stripped
    parents = sum(1 for item, link in zip(items, has_link, strict=True) if not link
                  and (len(item) <= MAX_TERM_CHARS
                       or _alnum(_plain(item)) <= MAX_TERM_CHARS))
    if len(linked) + parents < LINKED_SHARE * len(items):
        return False
    if sum(_alnum(MD_LINK.sub(r"\1", item)) for item in linked) > MAX_LINE_CHARS * len(linked):
        return False
    entries = list(_entries(lines))
    if sum(len(e.own.split()) <= MAX_TERM_WORDS for e in entries) < LINKED_SHARE * len(entries):
        return False    # prose with links in it (an API entry's parameter list)
    terms = [_sort_key(e.term) for e in entries if e.top]
    terms = [t for t in terms if t]
    pairs = list(pairwise(terms))
    return len(pairs) >= MIN_ENTRIES // 2 and (
        sum(a < b for a, b in pairs) >= SORTED_SHARE * len(pairs))


def _sort_key(term: str) -> str:
    """How indexes sort: case and leading punctuation ignored."""
    return re.sub(r"^[^\w]+", "", term.casefold())


def index_prefixes(sections: list[Section]) -> list[tuple[str, ...]]:
    """The heading paths under which a page is a back-of-book index: () for the whole
    page (Sphinx genindex, a Texinfo index node, DocBook bookindex), else the shortest
    paths whose text is one (R's one-page manuals end with their indexes)."""
    links = [sum(line.count("](") for line in s.lines) for s in sections]

    # whether the sections of these numbers (those with lines) read as an index: a page
    # under one heading (its h1) holds the same lines under () and under that heading, a
    # heading with one subheading the same at two depths; each set is read once (a 5,700-line
    # changelog cost 30 ms a reading)
    verdicts: dict[tuple[int, ...], bool] = {}

    def index_under(prefix: tuple[str, ...]) -> bool:
        inside = tuple(i for i, s in enumerate(sections)
                       if s.path[:len(prefix)] == prefix and s.lines)
        if sum(links[i] for i in inside) < MIN_ENTRIES:   # too few links (cheap)
            return False
        if inside not in verdicts:
            verdicts[inside] = is_index([line for i in inside for line in sections[i].lines])
        return verdicts[inside]

    if sum(links) < MIN_ENTRIES:
        return []
    if index_under(()):
        return [()]
    found: list[tuple[str, ...]] = []
    for depth in (1, 2, 3):
        for prefix in dict.fromkeys(s.path[:depth] for s in sections if len(s.path) >= depth):
            if any(prefix[:len(f)] == f for f in found):
                continue
            if index_under(prefix):
                found.append(prefix)
    return found


def index_entries(sections: list[Section], prefixes: list[tuple[str, ...]],
                  ) -> Iterator[tuple[str, str, str, str, bool]]:
    """(term, the item's own words, URL, link text, top-level) for every place the index
    sections under `prefixes` link to (DocBook's link text is the target's title)."""
    for section in sections:
        if any(section.path[:len(p)] == p for p in prefixes):
            for entry in _entries(section.lines):
                if _LETTERS.search(entry.term) and len(entry.term) <= MAX_TERM_CHARS:
                    for url, text in entry.urls:
                        yield entry.term, entry.own, url, text, entry.top


_CELL = re.compile(r"(?<!\\)\|")


def summary_entries(lines: Iterable[str]) -> Iterator[tuple[str, str]]:
    """(summary, URL) from API summary tables: a Markdown table row whose first non-empty
    cell is one link (the member) and whose other cells hold prose of a few words (its
    one-line summary: Sphinx autosummary, Doxygen and gi-docgen member tables)."""
    for line in lines:
        if not line.lstrip().startswith("|"):
            continue
        cells = [c.strip() for c in _CELL.split(line.strip().strip("|"))]
        cells = [c for c in cells if c]
        if len(cells) < 2:
            continue
        links = MD_LINK.findall(cells[0])
        if len(links) != 1 or _alnum(MD_LINK.sub("", cells[0])) > 0:
            continue
        rest = [c for c in cells[1:] if not MD_LINK.fullmatch(c.strip("*_` "))]
        summary = " ".join(_plain(c) for c in rest).strip()
        if len(summary.split()) >= SUMMARY_MIN_WORDS:
            yield summary[:SUMMARY_MAX_CHARS], links[0][1]


def norm(text: str) -> str:
    return "".join(_ALNUM.findall(text.casefold()))
