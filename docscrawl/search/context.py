"""`docscrawl context` and MCP's `get_context`: the few best sections for an assistant.

A search answers with a ranked list; an assistant needs a context it can paste and cite:
the best sections that fit a token budget (counted as the chunks count theirs,
`chunking.units.count_tokens`: offline, no model), each with its citation, the version
used stated once, and flags where it should say it is unsure (seed 002: "state
uncertainty when sources disagree or do not cover the question"):

- `not_covered`: the search's no-good-match measure (`Result.no_good_match`).
- `sources_disagree`: two chosen sections, or a chosen section and the same page in
  another version, bind a different literal to a name the question uses (`facts`).
- `cut` / `left_out`: a section larger than what is left of the budget is cut at a block
  boundary (never inside a code fence) or, when not even its first block fits, left out.

Sections of one page stay in document order, and neighbours (consecutive chunks of one
page) are merged into one section.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from docscrawl.chunking.units import count_tokens
from docscrawl.search.hits import Hit, Result
from docscrawl.search.quote import DATA_NOTICE, defuse_line, quote_document
from docscrawl.search.rank import Searcher
from docscrawl.search.tokenize import terms
from docscrawl.search.versions import unversioned

DEFAULT_BUDGET = 2000      # tokens of section text
MAX_QUESTION_CHARS = 2000  # a longer question is searched by its start (and says so)
SHOWN_QUESTION_CHARS = 300  # the text header quotes no more of a long question
POOL = 20                  # search results the sections are chosen from
MAX_SECTIONS = 5
RELATIVE_FLOOR = 0.35      # a section scoring under this share of the best is not chosen
MIN_CUT_TOKENS = 40        # a cut part shorter than this is not worth citing


class ContextError(ValueError):
    """A question or budget that cannot be answered (empty, budget under 1)."""


@dataclass
class Section:
    """One chosen section (or several contiguous chunks of one page merged)."""
    hit: Hit
    text: str
    tokens: int
    score: float
    cut: str | None = None          # how it was cut to fit, else None
    chunk_indexes: list[int] = field(default_factory=list)

    @property
    def page(self) -> str:
        return self.hit.url().split("#", 1)[0]

    def as_json(self) -> dict[str, Any]:
        meta = self.hit.meta
        found = {"url": self.hit.url(), "heading_path": meta.get("heading_path") or [],
                 "version": meta.get("version"), "retrieved_at": meta.get("retrieved_at"),
                 "citation": self.hit.citation(), "score": round(self.score, 6),
                 "text": self.text, "tokens": self.tokens,
                 "title": meta.get("title"), "content_hash": meta.get("content_hash")}
        if self.cut:
            found["cut"] = self.cut
        if len(self.chunk_indexes) > 1:
            found["merged_chunks"] = len(self.chunk_indexes)
        return found


@dataclass
class Context:
    """The answer of `build_context`."""
    question: str
    version_used: str | None
    version_note: str
    budget: int
    sections: list[Section]
    flags: list[dict[str, str]]
    match: float = 0.0   # the search's match_strength (picks the site among several)
    version_source: str = "none"

    def as_json(self) -> dict[str, Any]:
        return {"question": self.question, "version_used": self.version_used,
                "version_note": self.version_note, "budget": self.budget,
                "tokens": sum(s.tokens for s in self.sections),
                "sections": [s.as_json() for s in self.sections], "flags": self.flags}


def _word_cut(text: str, limit: int) -> str:
    """The start of `text` within `limit` characters, cut after its last whole word."""
    return text[:limit].rsplit(" ", 1)[0]


def check_question(question: str) -> str:
    """The question on one line; a clear error for an empty one (search and context alike:
    an empty query would otherwise list arbitrary sections as if they answered it)."""
    flat = " ".join(question.split())
    if not flat:
        raise ContextError("the question is empty")
    return flat


def check_request(question: str, budget: int) -> str:
    """The question on one line; a clear error for an empty one or a budget under 1."""
    if budget < 1:
        raise ContextError(f"the budget must be a positive number of tokens (got {budget})")
    return check_question(question)


def build_context(searcher: Searcher, question: str, *, version: str | None = None,
                  budget: int = DEFAULT_BUDGET) -> Context:
    """The best sections for `question` within `budget` tokens, with their flags."""
    asked = check_request(question, budget)
    flags: list[dict[str, str]] = []
    searched = asked
    if len(asked) > MAX_QUESTION_CHARS:
        searched = _word_cut(asked, MAX_QUESTION_CHARS)
        flags.append(_flag("question_cut", f"the question has {len(asked):,} characters; "
                                           f"its first {len(searched):,} were searched"))
    result = searcher.search(searched, version=version, k=POOL)
    chosen, left = choose(result, budget)
    if result.no_good_match:
        flags.append(_flag("not_covered", "the documentation found holds little of the "
                                          f"question (match {result.match:.2f}): it may "
                                          "not cover it"))
    flags += [_flag("left_out", note) for note in left]
    flags += disagreements(asked, chosen, [h for h in result.hits if _other(h, result)],
                           searcher.index.versions())
    return Context(question=asked, version_used=result.version, version_note=result.note(),
                   budget=budget, sections=chosen, flags=flags, match=result.match,
                   version_source=result.version_source)


def _flag(kind: str, note: str) -> dict[str, str]:
    return {"flag": kind, "note": note}


def _other(hit: Hit, result: Result) -> bool:
    """A hit outside the version used (another version's copy of a page)."""
    return result.version is not None and hit.meta.get("version") not in (
        result.version, *result.aliases)


def choose(result: Result, budget: int) -> tuple[list[Section], list[str]]:
    """The first MAX_SECTIONS results (the version used only, no print views, none far
    below the best) taken in rank order while they fit, then put in document order per
    page and merged where contiguous; and one note naming those left out for want of
    room."""
    hits = [h for h in result.hits if not _other(h, result) and not h.page_aggregate_of]
    if not hits:
        return [], []
    floor = RELATIVE_FLOOR * hits[0].score
    picked: list[Section] = []
    left: list[tuple[Hit, int]] = []
    room = budget
    for hit in hits:
        if len(picked) + len(left) >= MAX_SECTIONS or hit.score < floor:
            break
        text = str(hit.record.get("markdown") or hit.record.get("text") or "")
        tokens = count_tokens(text)
        cut = None
        if tokens > room:
            part = cut_at_block(text, room) if room >= MIN_CUT_TOKENS or not picked else None
            if part is None or (picked and count_tokens(part) < MIN_CUT_TOKENS):
                left.append((hit, tokens))
                continue
            cut = (f"cut at a block boundary to fit the budget: {count_tokens(part):,} "
                   f"of its {tokens:,} tokens")
            text, tokens = part, count_tokens(part)
        picked.append(Section(hit=hit, text=text, tokens=tokens, score=hit.score, cut=cut,
                              chunk_indexes=[_chunk_index(hit)]))
        room -= tokens
    notes = []
    if left:
        (first, size), more = left[0], len(left) - 1
        notes.append(f"{first.citation()} ({size:,} tokens)"
                     + (f" and {more} more section{'s' * (more > 1)}" if more else "")
                     + f" did not fit in the budget ({room:,} of {budget:,} tokens left; "
                       "a larger budget takes them)")
    return in_document_order(picked), notes


def _chunk_index(hit: Hit) -> int:
    value = hit.meta.get("chunk_index")
    return int(value) if isinstance(value, int) else -1


def in_document_order(picked: list[Section]) -> list[Section]:
    """Pages in the order of their best section; a page's sections in document order,
    consecutive chunks (nothing cut between them) merged into one."""
    pages: dict[str, list[Section]] = {}
    for section in picked:
        pages.setdefault(section.page, []).append(section)
    ordered: list[Section] = []
    for sections in pages.values():
        sections.sort(key=lambda s: s.chunk_indexes[0])
        merged = [sections[0]]
        for section in sections[1:]:
            last = merged[-1]
            if (last.cut is None and section.cut is None and last.chunk_indexes[-1] >= 0
                    and section.chunk_indexes[0] == last.chunk_indexes[-1] + 1):
                last.text += "\n\n" + section.text
                last.tokens += section.tokens
                last.score = max(last.score, section.score)
                last.chunk_indexes += section.chunk_indexes
            else:
                merged.append(section)
        ordered += merged
    return ordered


_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def blocks(markdown: str) -> list[str]:
    """The Markdown's blocks (paragraphs, lists, tables, whole code fences), split at
    blank lines outside fences."""
    found: list[str] = []
    current: list[str] = []
    fence: str | None = None
    for line in markdown.split("\n"):
        opened = _FENCE.match(line)
        if fence is not None:
            current.append(line)
            if opened and opened.group(1).startswith(fence) and not line[opened.end():].strip():
                fence = None
            continue
        if opened:
            fence = opened.group(1)
        if not line.strip() and fence is None:
            if current:
                found.append("\n".join(current))
                current = []
            continue
        current.append(line)
    if current:
        found.append("\n".join(current))
    return found


def cut_at_block(markdown: str, room: int) -> str | None:
    """The longest run of whole blocks from the start that fits in `room` tokens; None
    when it would hold headings only (a code block is never split)."""
    kept: list[str] = []
    for block in blocks(markdown):
        if count_tokens("\n\n".join([*kept, block])) > room:
            break
        kept.append(block)
    if all(block.startswith("#") for block in kept):
        return None
    return "\n\n".join(kept)


# ---- sources that disagree ---------------------------------------------------------

_LITERAL = r"(\"[^\"\n]{0,40}\"|'[^'\n]{0,40}'|-?\d+(?:\.\d+)?|true|false|none|null)"
# A parameter's default in a signature: `name=value` after `(` or `,`.
_PARAMETER = re.compile(rf"[(,]\s*\**([A-Za-z_]\w*)\s*(?::[^=,()]*)?=\s*{_LITERAL}\s*(?=[,)])",
                        re.IGNORECASE)
# An API signature: a line that is only inline code, `class acme.Client(url, timeout=30)`
# (a call inside a sentence is an example).
_SIGNATURE = re.compile(r"^`((?:class |def |async def )?[A-Za-z_][\w.]*\(.*\)[^`]*)`$",
                        re.MULTILINE)
# "Default: `30`", "defaults to 30", "default is true" under a heading naming a setting:
# the value a code span or a literal.
_DEFAULT_SAID = re.compile(rf"\bdefault(?:s to|:| is)\s*(?:`([^`\n]{{1,40}})`|{_LITERAL}(?!\w))",
                           re.IGNORECASE)
_IDENTIFIER = re.compile(r"^[A-Za-z_][\w.-]*$")
_ROW = re.compile(r"^\|(.*)\|\s*$")
_HEADING_LINE = re.compile(r"^#{1,6} (.*)$")


def facts(markdown: str) -> dict[str, set[str]]:
    """The defaults the text states, by name: a parameter's in an API signature (inline
    code, `class acme.Client(url, timeout=30)`), a setting's in a table with a "Default"
    column (the row's first cell names it), and "Default: 30" / "defaults to 30" under a
    heading that is an identifier (a setting's or option's entry). Values in examples
    (code blocks, calls in prose) are not defaults and are not read. Names by their last
    dotted part, lower case, `-` as `_`; values lower case, unquoted."""
    found: dict[str, set[str]] = {}
    prose = re.sub(r"```.*?```", "", markdown, flags=re.DOTALL)
    for signature in _SIGNATURE.findall(prose):
        for name, value in _PARAMETER.findall(signature):
            found.setdefault(_name(name), set()).add(_value(value))
    for name, value in [*_table_defaults(prose), *_stated_defaults(prose)]:
        found.setdefault(_name(name), set()).add(_value(value))
    return found


def _stated_defaults(markdown: str) -> list[tuple[str, str]]:
    """(heading, value) for the first "Default: value" under each identifier heading."""
    said: list[tuple[str, str]] = []
    name: str | None = None
    for line in markdown.split("\n"):
        heading = _HEADING_LINE.match(line)
        if heading:
            text = heading.group(1).strip().strip("`")
            name = text if _IDENTIFIER.match(text) else None
            continue
        match = _DEFAULT_SAID.search(line) if name else None
        if match and name:
            said.append((name, match.group(1) or match.group(2)))
            name = None
    return said


def _table_defaults(markdown: str) -> list[tuple[str, str]]:
    rows: list[tuple[str, str]] = []
    column: int | None = None
    for line in markdown.split("\n"):
        match = _ROW.match(line.strip())
        if not match:
            column = None
            continue
        cells = [c.strip().strip("`") for c in match.group(1).split("|")]
        if column is None:
            column = next((i for i, c in enumerate(cells) if c.lower() == "default"), -1)
            continue
        if column > 0 and len(cells) > column and cells[0] and not set(cells[0]) <= set("-: "):
            rows.append((cells[0], cells[column]))
    return rows


def _name(name: str) -> str:
    return name.rsplit(".", 1)[-1].lower().replace("-", "_")


def _value(value: str) -> str:
    return value.strip().strip("\"'`").lower()


def disagreements(question: str, chosen: list[Section], others: list[Hit],
                  versions: list[str]) -> list[dict[str, str]]:
    """A flag for each name the question uses that two sources bind to different values:
    two chosen sections of different pages, or a chosen section and another version's
    copy of its page among the search results. A source binding the name to several
    values (a table of cases) says nothing on its own."""
    asked = {_name(t) for t in terms(question)}
    sources: list[tuple[str, str, dict[str, set[str]]]] = [
        (s.page, s.hit.citation(), facts(s.text)) for s in chosen]
    chosen_pages = {unversioned(s.page, versions) for s in chosen}
    for hit in others:
        page = hit.url().split("#", 1)[0]
        if unversioned(page, versions) in chosen_pages:
            sources.append((page, hit.citation(), facts(str(hit.record.get("markdown") or ""))))
    flags = []
    for name in sorted(asked):
        said = [(page, citation, next(iter(values))) for page, citation, found in sources
                if len(values := found.get(name, set())) == 1]
        if len({value for _, _, value in said}) < 2 or len({p for p, _, _ in said}) < 2:
            continue
        first = said[0]
        other = next(item for item in said if item[2] != first[2])
        flags.append(_flag("sources_disagree",
                           f"{name} is {first[2]} in {first[1]} but {other[2]} in {other[1]}"))
    return flags



def format_context(context: Context, site: str | None = None) -> str:
    """The context as an assistant reads it: a line with the question and the version
    used, one per flag, the data notice, then each section as a quoted `<document>`
    (`quote`) under its `[n]` line. Everything the site wrote is inside the quotes or
    defused on one line."""
    spent = sum(s.tokens for s in context.sections)
    shown = context.question
    if len(shown) > SHOWN_QUESTION_CHARS:  # its flag says how long it was
        shown = _word_cut(shown, SHOWN_QUESTION_CHARS) + " …"
    lines = [defuse_line(f"Context for {shown!r}. Version used: "
                         f"{_version_used(context)}. {len(context.sections)} sections, "
                         f"{spent:,} of {context.budget:,} tokens.")]
    lines += [defuse_line(f"Flag {flag['flag']}: {flag['note']}") for flag in context.flags]
    blocks = ["\n".join(lines), DATA_NOTICE]
    if not context.sections:
        blocks.append("No sections.")
    for rank, section in enumerate(context.sections, 1):
        fields = section.as_json()
        text = fields.pop("text")
        citation = fields.pop("citation")
        attributes = {"site": site, "rank": rank, "citation": citation, **fields}
        blocks.append(f"[{rank}]\n" + quote_document(text, attributes))
    return "\n\n".join(blocks)


def _version_used(context: Context) -> str:
    """The version and why it was used, once: "2.0 (the site's default ...)"."""
    if context.version_used is None:
        return "none (the crawl has no version information)"
    why = {"filter": "asked for", "query": "named in the question",
           "default": context.version_note.split(", ", 1)[-1]}.get(
        context.version_source, "the only one in the crawl")
    return f"{context.version_used} ({why})"
