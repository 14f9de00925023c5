"""Structural signals: the factors ranking applies to fused candidates, from the index's
rank columns (no JSON parsed), and the one-result-per-section cut.

A candidate's fused score (bm25 and cosine, `fusion.fuse`) says how much its text matches;
what kind of place it is says more: query words in its title and headings, code for a
command-like query, a listing for a prose one, a region outside the main content, a print
view (`aggregate_of`), a back-of-book index (never an answer), a release history's entry
for a question about no release, another version than the one preferred, and how many of
its page's other sections match too (`page_support`).
Then what the first results hold: a page's overloads after every other result, no page
holding all of the first five (`_page_share`), and, with section vectors, which of a page's
sections fill the places it holds (`siblings_by_section`).
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable

from docscrawl.search.fields import SITE_INDEX
from docscrawl.search.tokenize import command_like

OTHER_VERSION = 0.6     # factor for chunks outside the preferred default version
HEADING_BOOST = 0.8     # at most this much more for query words all in title/headings
CODE_BOOST = 0.15
OFF_MAIN = 0.8
AGGREGATE = 0.5
LISTING = 0.7         # a chunk nearly all code, for a prose question (not a command, no identifier)
WEAK = 0.25          # see structural: a preferred result this far below the best
HEADING_TERMS = 6    # see heading_share: headings of more terms than this match by chance
PREFIX_MIN = 5       # see heading_match: a query word this long (letters) ...
PREFIX_EXTRA = 3     # ... also matches a heading word that extends it by at most this
PAGE_SUPPORT = 0.2   # see page_support: this times the page's second-best candidate ...
SUPPORT_CHUNKS = 10  # ... in full on pages of at most this many chunks, scaled down beyond
# see _page_share: results of one page before the other pages' (tune and old sets: 2 and 3
# lost old section hit@5, 6 and 2 questions; 4 lost none and gained two tune questions)
PAGE_SHARE = 4
REPEATS_LAST = True  # see structural: a page's later sections under the same headings last
# see release_history: factor for a release history's entries, for a question naming no
# release (tune and old sets: 0.2 to 0.6 alike, +1 tune page hit@5, +1 old section hit@5;
# 0.8 kept the tune question's page 5th; rank28's value for its word-only test, 0.6, kept)
RELEASE_HISTORY = 0.6
# see siblings_by_section: a section's cosine above its page's other candidates' raises it
# among them by this times the difference (wordllama+minilm, tune and old sets: 1, 1.5 and
# 2 alike, old section hit@5 +2, tune unchanged; 0.5 old +1; 3 lost a tune section)
SIBLING_COSINE = 1.5
# heading words (stemmed as heading terms are) that name a release history, each set whole
RELEASE_WORDS = (frozenset({"changelog"}), frozenset({"chang", "histori"}),
                 frozenset({"chang", "log"}), frozenset({"releas", "not"}),
                 frozenset({"relea", "not"}), frozenset({"releas", "histori"}),
                 frozenset({"whatsnew"}))
_RELEASE_NUMBER = re.compile(r"v?\d+(?:\.\d+)+[a-z]*\d*")
_RELEASE_ANY = frozenset().union(*RELEASE_WORDS)

Ranked = tuple[float, int, str, list[str]]  # score, chunk rowid, page URL, pages it copies


def page_support(fused: dict[int, float], page_of: dict[int, str],
                 page_sizes: dict[str, int]) -> dict[int, float]:
    """Each candidate raised by PAGE_SUPPORT times the score of its page's second-best
    candidate: a page where two sections match the question is more likely the page about
    it than one where a single section does by a chance word. The same amount for every
    chunk of a page, so the order within a page stays the fused one. A long page
    (a changelog, a configuration reference, a FAQ) has a second match by chance: on a
    page of n chunks the support is scaled by SUPPORT_CHUNKS / n when n is larger."""
    scores: dict[str, list[float]] = {}
    for rowid, score in fused.items():
        scores.setdefault(page_of.get(rowid, ""), []).append(score)
    bonus = {page: PAGE_SUPPORT * sorted(found, reverse=True)[1]
             * min(1.0, SUPPORT_CHUNKS / max(1, page_sizes.get(page, 1)))
             for page, found in scores.items() if len(found) > 1}
    return {rowid: score + bonus.get(page_of.get(rowid, ""), 0.0)
            for rowid, score in fused.items()}


def structural(db: sqlite3.Connection, fused: dict[int, float], wanted: dict[str, float],
               terms: list[str], query: str, *, preferred: set[str | None] | None, k: int,
               unversioned: Callable[[str], str], identifier: Callable[[str], bool],
               page_sizes: dict[str, int],
               section_cosines: dict[int, float] | None = None) -> list[Ranked]:
    """Structural factors on every candidate (from the rank columns, no JSON parsed),
    one per section; the best `k`. Sections of a page under the same title and headings
    (Javadoc's or C++'s overloads, each its own anchor) say what the first of them said:
    the others go after every other result, leaving the top to sections of other names
    (on the tune set's Commons Lang, four `random` overloads held the top four above
    `randomAlphanumeric`). `wanted`: the stemmed query terms' idf (heading
    terms are stored stemmed); `unversioned`: a section key without its version;
    `page_sizes`: chunks per page URL (`page_support`); `section_cosines`: a candidate's
    section's cosine to the query, where the index has section vectors
    (`siblings_by_section`)."""
    if not fused:
        return []
    marks = ",".join("?" * len(fused))
    rows = db.execute(
        f"SELECT c.rowid, c.version, c.heading_terms, c.has_code, c.region, "
        f"c.section_key, c.page_url, p.aggregate_of FROM chunk_pages c LEFT JOIN pages p "
        f"ON p.url=c.page_url WHERE c.rowid IN ({marks})", list(fused)).fetchall()
    fused = page_support(fused, {row[0]: row[6] for row in rows}, page_sizes)
    total = sum(wanted.values())
    code_query = command_like(query)
    prose = not code_query and not any(identifier(term) for term in terms)
    asks_release = release_history(set(wanted), either=True)
    scored = []
    for rowid, version, heading_terms, has_code, region, section, page, aggregate in rows:
        score = fused[rowid]
        head_terms = set(heading_terms.split())
        if total:
            score *= 1 + HEADING_BOOST * heading_share(wanted, total, head_terms)
        if not asks_release and release_history(head_terms):
            score *= RELEASE_HISTORY
        if code_query and has_code:
            score *= 1 + CODE_BOOST
        elif has_code == 2 and prose:  # a listing answers a prose question rarely
            score *= LISTING
        if region == SITE_INDEX:  # a back-of-book index: its entries are the words
            continue              # of other sections (their `vocab` field), never an answer
        if region != "main_content":
            score *= OFF_MAIN
        copies = json.loads(aggregate) if aggregate else []
        if copies:
            score *= AGGREGATE
        other = preferred is not None and version is not None and version not in preferred
        if other:
            score *= OTHER_VERSION
        scored.append((score, rowid, section, page, copies, other, heading_terms))
    scored.sort(key=lambda item: item[0], reverse=True)
    best: list[Ranked] = []
    seen: set[str] = set()
    twins: list[Ranked] = []
    repeats: list[Ranked] = []
    headed: set[tuple[str, str]] = set()
    preferred_sections = {unversioned(s[2]) for s in scored if not s[5]}
    for score, rowid, section, page, copies, other, heads in scored:
        if section in seen:  # one result per section
            continue
        seen.add(section)
        item = (score, rowid, page, copies)
        if REPEATS_LAST and heads and (page, heads) in headed:
            repeats.append(item)  # an overload: what the first of its name said
            continue
        headed.add((page, heads))
        # the same section in another version: after the preferred version's results
        is_twin = other and unversioned(section) in preferred_sections
        (twins if is_twin else best).append(item)
    # twins come after the preferred version's results, except those that barely
    # match (below WEAK times the best score)
    best = siblings_by_section(best, section_cosines)
    floor = WEAK * best[0][0] if best else 0.0
    strong = [item for item in best if item[0] >= floor]
    return _below_originals(_page_share(strong + twins + best[len(strong):]) + repeats)[:k]


def siblings_by_section(ranked: list[Ranked],
                        cosines: dict[int, float] | None) -> list[Ranked]:
    """Which of a page's sections fill the places the page holds: the places and their
    scores stay, and the page's sections fill them in the order of their score times
    1 + SIBLING_COSINE x (their section's cosine - the mean of the page's candidates').
    bm25 and the chunk vectors rank a page's sections by the words they share with the
    question, which its siblings often share more of ("what value does a variable have
    before it is assigned": Go's "Variables" and "Assignment statements" over "The zero
    value"); the section vector, a sentence model's reading of the heading path and the
    opening sentence, tells what each section is about. Only the order within a page
    changes, so no page gains or loses a place (`cosines`: None or empty without section
    vectors, or for an exact question, which does not run them)."""
    if not cosines:
        return ranked
    places: dict[str, list[int]] = {}
    for place, item in enumerate(ranked):
        places.setdefault(item[2], []).append(place)
    ordered = list(ranked)
    for at in places.values():
        if len(at) < 2:
            continue
        items = [ranked[i] for i in at]
        known = [cosines[item[1]] for item in items if item[1] in cosines]
        mean = sum(known) / len(known) if known else 0.0
        items.sort(key=lambda item: -item[0] * (
            1 + SIBLING_COSINE * (cosines.get(item[1], mean) - mean)))
        for i, item in zip(at, items, strict=True):
            ordered[i] = (ranked[i][0], item[1], item[2], item[3])
    return ordered


def _page_share(ranked: list[Ranked]) -> list[Ranked]:
    """A page's results beyond its first PAGE_SHARE after every other page's: the first
    five are never one page's (a dialect's page of twenty psycopg2 sections, the R FAQ's
    chapter on packages held all five above the page that answered)."""
    if not PAGE_SHARE:
        return ranked
    per: dict[str, int] = {}
    kept: list[Ranked] = []
    later: list[Ranked] = []
    for item in ranked:
        per[item[2]] = per.get(item[2], 0) + 1
        (kept if per[item[2]] <= PAGE_SHARE else later).append(item)
    return kept + later


def release_history(terms: set[str], *, either: bool = False) -> bool:
    """Whether a chunk's title and headings (stemmed `terms`) name a release history's
    entry: a release number (`0.9.10`, `v2.1`) and release-history words (changelog,
    change history, release notes), both: a numbered manual section ("5.7.3. RTS
    options") has the number only. Such an entry names every feature its release changed
    (a changelog's "postgresql" and "UUID" lines) and answers a question that asks about
    a release; `either`: whether a query's terms ask (a number or the words)."""
    words = not terms.isdisjoint(_RELEASE_ANY) and any(names <= terms
                                                       for names in RELEASE_WORDS)
    if words and either:
        return True
    if not words and not either:  # (most chunks: no number looked for)
        return False
    return any(_RELEASE_NUMBER.fullmatch(term) for term in terms)


def heading_share(wanted: dict[str, float], total: float, heading_terms: set[str]) -> float:
    """The share of the query's weight (`total`) its title and headings carry, scaled by
    sqrt(HEADING_TERMS / n) for n distinct heading terms beyond HEADING_TERMS: a long
    heading (a FAQ entry's question, an error message, a deep numbered path under a long
    title) holds a query word or two by chance, as a long body does for bm25 (which
    normalizes its fields' length; this factor did not)."""
    found = heading_match(wanted, heading_terms)
    return found / total * min(1.0, HEADING_TERMS / max(1, len(heading_terms))) ** 0.5


def heading_match(wanted: dict[str, float], heading_terms: set[str]) -> float:
    """The idf weight of the query words a chunk's title and headings carry. The light
    stemmer leaves some forms apart ("remote" / "Remotely", "debug" / "Debugger"): a query
    word of PREFIX_MIN letters or more also matches a heading word that extends it by at
    most PREFIX_EXTRA letters."""
    found = 0.0
    for term, weight in wanted.items():
        if term in heading_terms or (
                len(term) >= PREFIX_MIN and term.isalpha()
                and any(h.startswith(term) and len(h) - len(term) <= PREFIX_EXTRA
                        for h in heading_terms)):
            found += weight
    return found


def _below_originals(ranked: list[Ranked]) -> list[Ranked]:
    """An aggregate page's chunk never ranks above a chunk of a page it copies."""
    ordered = list(ranked)
    for item in [r for r in ranked if r[3]]:
        copied = {u.split("#", 1)[0] for u in item[3]}
        at = ordered.index(item)
        last = max((i for i, r in enumerate(ordered) if r[2] in copied), default=-1)
        if last > at:
            ordered.insert(last, ordered.pop(at))
    return ordered
