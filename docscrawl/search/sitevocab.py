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
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urldefrag

from docscrawl.search.vocabread import (
    index_entries,
    index_prefixes,
    norm,
    split_sections,
    summary_entries,
)

NOVEL_SHARE = 0.5       # an index's entries: at least this share are not their target's heading
MAX_TERMS = 12          # per target (page + fragment): the first entries, then no more
MAX_CHARS = 320         # per target, and per chunk in all


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
        self.names[url] = {norm(str(h.get("text") or "")) for h in headings} | {
            norm(str(page.get(key) or "")) for key in ("title", "main_heading")}
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
                novel = [r for r in resolved if norm(r[3]) not in self.names.get(r[0], ())]
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
