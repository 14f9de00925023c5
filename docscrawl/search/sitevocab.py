"""The site's own vocabulary: what its back-of-book index and its API summary tables
call a section, learned from the crawl's pages and indexed as a field of that section.

Documentation publishes its synonyms. A back-of-book index (Sphinx `genindex`, DocBook
`bookindex`, a Texinfo index node, Javadoc `index-all`) says "vacuum, routine
maintenance" and "disk space" point at the section named "Recovering Disk Space"; an API
summary table gives each member a one-line summary in plain words. Neither is known by
generator name: an index is a run of short, alphabetically sorted lines that each link to
a place on the site (`index_prefixes`), a summary is a table row whose first cell is a
link and whose other cells are prose (`summary_entries`).

The index sections themselves are never answers (ranking demotes their chunks); their
entries become the `vocab` field of the chunks they point at, capped per target
(`MAX_TERMS`, `MAX_CHARS`) so a section that 500 entries point at does not collect 500
entries' words.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any
from urllib.parse import urldefrag

from docscrawl.search.tokenize import stem

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
NOVEL_SHARE = 0.5       # ... and at least this share of them are not the target's heading
MAX_TERMS = 12          # per target (page + fragment): the first entries, then no more
MAX_CHARS = 320         # per target, and per chunk in all
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
    linked = [item for item in items if MD_LINK.search(item)]
    if len(linked) < MIN_ENTRIES:
        return False
    parents = sum(1 for item in items if not MD_LINK.search(item)
                  and _alnum(_plain(item)) <= MAX_TERM_CHARS)
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

    def under(prefix: tuple[str, ...]) -> list[str] | None:
        """The lines under `prefix`; None when too few links for an index (cheap)."""
        inside = [i for i, s in enumerate(sections) if s.path[:len(prefix)] == prefix]
        if sum(links[i] for i in inside) < MIN_ENTRIES:
            return None
        return [line for i in inside for line in sections[i].lines]

    lines = under(())
    if lines is None:
        return []
    if is_index(lines):
        return [()]
    found: list[tuple[str, ...]] = []
    for depth in (1, 2, 3):
        for prefix in dict.fromkeys(s.path[:depth] for s in sections if len(s.path) >= depth):
            if any(prefix[:len(f)] == f for f in found):
                continue
            lines = under(prefix)
            if lines is not None and is_index(lines):
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


def _norm(text: str) -> str:
    return "".join(_ALNUM.findall(text.casefold()))


def _words(term: str) -> frozenset[str]:
    return frozenset(re.findall(r"[^\W_]+", term.casefold()))


@dataclass
class SiteVocabulary:
    """What the site's indexes and summary tables call each place they link to, and which
    parts of which pages are indexes (never answers). Learned page by page (`add_page`),
    then `finish`ed once every page's headings are known."""
    index_parts: dict[str, list[tuple[str, ...]]] = field(default_factory=dict)  # by finish
    canonical: dict[str, str] = field(default_factory=dict)  # observed URL -> canonical
    names: dict[str, set[str]] = field(default_factory=dict)  # page -> its heading names
    anchor_paths: dict[str, dict[str, tuple[str, ...]]] = field(default_factory=dict)
    # index page -> per index part: its path, entries (term, own words, URL, link text),
    # and the fragments inside it
    found: dict[str, list[tuple[tuple[str, ...], list[tuple[str, str, str, str, bool]],
                                set[str]]]] = field(default_factory=dict)
    # (page, fragment) -> the texts of the index links to it (where in the page it is)
    labels: dict[tuple[str, str], set[str]] = field(default_factory=dict)
    summaries: list[tuple[str, str, str]] = field(default_factory=list)  # (source, term, link)

    def add_page(self, page: dict[str, Any]) -> None:
        url = page.get("canonical_url")
        if not isinstance(url, str):
            return
        for alias in [url, *(page.get("observed_urls") or [])]:
            self.canonical.setdefault(urldefrag(str(alias))[0], url)
        headings = [h for h in page.get("headings") or [] if isinstance(h, dict)]
        self.names[url] = {_norm(str(h.get("text") or "")) for h in headings} | {
            _norm(str(page.get(key) or "")) for key in ("title", "main_heading")}
        self.anchor_paths[url] = {str(h["anchor"]): tuple(map(str, h.get("path") or ()))
                                  for h in headings if h.get("anchor")}
        sections = split_sections(str(page.get("markdown") or ""), headings)
        prefixes = index_prefixes(sections)
        for prefix in prefixes:
            inside = {str(h.get("anchor")) for h in headings
                      if tuple(h.get("path") or ())[:len(prefix)] == prefix}
            if prefix == ():
                inside |= {str(f) for f in page.get("fragment_ids") or ()} | {""}
            self.found.setdefault(url, []).append(
                (prefix, list(index_entries(sections, [prefix])), inside))
        lines = [line for s in sections if not any(s.path[:len(p)] == p for p in prefixes)
                 for line in s.lines]
        self.summaries += [(url, term, link) for term, link in summary_entries(lines)]

    def _page(self, source: str, link: str) -> tuple[str | None, str]:
        base, fragment = urldefrag(link)
        base = base or source
        return (self.canonical.get(base) or self.canonical.get(base.rstrip("/") + "/"),
                fragment)

    def finish(self) -> dict[str, dict[str, list[str]]]:
        """The terms by canonical page, then fragment ('' for the page itself), capped per
        target; links to pages the crawl does not hold are dropped. An "index" whose
        entries mostly repeat their targets' headings is a sorted table of contents (a
        list of commands, a TOC by section number): not an index, and nothing learned."""
        by_page: dict[str, dict[str, list[str]]] = {}

        def add(page: str, fragment: str, term: str) -> None:
            slot = by_page.setdefault(page, {}).setdefault(fragment, [])
            if len(slot) >= MAX_TERMS or sum(map(len, slot)) + len(term) > MAX_CHARS:
                return
            words = _words(term)
            if words and all(_words(t) != words for t in slot):  # "a; b" and "b; a"
                slot.append(term)

        for source, parts in self.found.items():
            for prefix, entries, inside in parts:
                # links into the index itself (letter jumps, a class list on its own page)
                # and off the crawl say nothing about a place on the site
                resolved = [(page, fragment, term, own, text, top)
                            for term, own, link, text, top in entries
                            for page, fragment in (self._page(source, link),)
                            if page and not (page == source and fragment in inside)]
                novel = [r for r in resolved if _norm(r[3]) not in self.names.get(r[0], ())]
                top = [r for r in resolved if r[5]]
                if not novel or sum(r in novel for r in top) < NOVEL_SHARE * len(top):
                    continue    # a table of contents: its entries are its targets' headings
                self.index_parts.setdefault(source, []).append(prefix)
                for page, fragment, term, _, text, _ in novel:
                    add(page, fragment, term)
                    self.labels.setdefault((page, fragment), set()).add(text)
        for source, term, link in self.summaries:
            target, fragment = self._page(source, link)
            if target and target != source:
                add(target, fragment, term)
        return by_page


@dataclass
class ChunkView:
    """What assigning terms needs of one chunk of a page."""
    chunk_id: str
    heading_path: tuple[str, ...]
    anchors: list[str]
    markdown: str


def assign(chunks: list[ChunkView], fragments: dict[str, list[str]],
           heading_anchors: dict[str, tuple[str, ...]],
           labels: dict[str, set[str]] | None = None) -> dict[str, str]:
    """Chunk id -> its vocabulary text, for the chunks of one page (in page order).

    A fragment that is a chunk's anchor (or one of its sections') goes to that chunk; a
    heading anchor of a subsection merged into a chunk goes to the chunk whose heading
    path holds it; any other fragment to the chunk whose heading the index link's text
    names (DocBook links name the section: "disk space, [Recovering Disk Space]"), else
    (Sphinx `index-0`, an API member's id, Texinfo `index-core-dump`) to the first chunk
    with a heading or a line that starts with the term (a definition:
    "`format_help(ctx, formatter)`"), else that mentions it; no fragment (or none found)
    to the page's first chunk."""
    if not chunks:
        return {}
    text = _PageText(chunks)
    by_anchor: dict[str, ChunkView] = {}
    for first in chunks:  # a long section's chunks share its anchor: the first one
        for anchor in first.anchors:
            by_anchor.setdefault(anchor, first)
    given: dict[str, list[str]] = {}
    for fragment, found in fragments.items():
        chunk = by_anchor.get(fragment) if fragment else chunks[0]
        if chunk is None and fragment in heading_anchors:
            path = heading_anchors[fragment]
            owners = [c for c in chunks if path[:len(c.heading_path)] == c.heading_path]
            chunk = max(owners, key=lambda c: len(c.heading_path)) if owners else None
        if chunk is None and fragment:
            names = [n for n in map(_norm, (labels or {}).get(fragment, ())) if len(n) >= 4]
            chunk = next((c for c, head in zip(chunks, text.heads, strict=True)
                          if head and any(head.endswith(n) for n in names)), None)  # "25.1.4. ..."
        if chunk is None:
            chunk = _mentioning(chunks, text, fragment, found) or chunks[0]
        given.setdefault(chunk.chunk_id, []).extend(found)
    result = {}
    by_id = {c.chunk_id: c for c in chunks}
    for chunk_id, found in given.items():
        kept, size = [], 0
        own = _stems(" ".join([*by_id[chunk_id].heading_path, by_id[chunk_id].markdown]))
        for entry in dict.fromkeys(found):
            # only the words the chunk does not say itself: those it says already count
            # in its own text, and would count twice
            term = " ".join(w for w in re.findall(r"[^\W_]+", entry)
                            if stem(w.casefold()) not in own)
            if not term or term in kept:
                continue
            if size + len(term) > MAX_CHARS:
                break
            kept.append(term)
            size += len(term) + 1
        result[chunk_id] = "\n".join(kept)
    return result


def _stems(text: str) -> set[str]:
    """The stemmed words of a text (identifiers by their parts: `accept_content`)."""
    return {stem(w) for w in re.findall(r"[^\W_]+", text.casefold())}


def _keys(fragment: str, terms: list[str]) -> list[str]:
    """The words a chunk defining this place would show: the fragment's last part
    (`click.Command.format_help` -> `format_help`) and each term's head."""
    keys = [re.sub(r"^index-", "", re.split(r"[.:/]", fragment)[-1])] if fragment else []
    keys += [re.sub(r"\(\)$", "", t.split(" (")[0].split(",")[0]).strip() for t in terms]
    return [k.casefold() for k in dict.fromkeys(keys) if len(k) >= 3
            and not re.fullmatch(r"(index|id)?[-_]?\d*", k, re.I)]


_FIRST_WORD = re.compile(r"[^\W]+")


class _PageText:
    """A page's chunks as `_mentioning` reads them, folded once per page."""

    def __init__(self, chunks: list[ChunkView]) -> None:
        self.heads = [_norm(c.heading_path[-1]) if c.heading_path else "" for c in chunks]
        self.folded = [c.markdown.casefold() for c in chunks]
        # first word of a line -> (chunk, line), in page order: who opens a line with a key
        self.openers: dict[str, list[tuple[int, str]]] = {}
        for i, folded in enumerate(self.folded):
            for line in folded.splitlines():
                line = line.lstrip("#`*-: >")
                first = _FIRST_WORD.match(line)
                if first:
                    self.openers.setdefault(first.group(), []).append((i, line))


def _mentioning(chunks: list[ChunkView], text: _PageText, fragment: str,
                terms: list[str]) -> ChunkView | None:
    """The chunk that defines a place best: a heading named by the key (Celery's
    settings: `std-setting-accept_content` under the heading "accept_content"), else a
    line opening with it (a signature), else the first mention."""
    keys = _keys(fragment, terms)
    if not keys:
        return None
    for key in keys:
        normed = _norm(key)
        for chunk, head in zip(chunks, text.heads, strict=True):
            if normed and head.startswith(normed):
                return chunk
    for key in keys:
        first = _FIRST_WORD.match(key)
        for i, line in text.openers.get(first.group() if first else "", ()):
            if line.startswith(key):
                return chunks[i]
    for key in keys:
        word = re.compile(rf"(?<![\w.]){re.escape(key)}(?!\w)")  # "cos", not "cost"
        for chunk, folded in zip(chunks, text.folded, strict=True):
            if key in folded and word.search(folded):
                return chunk
    return None
