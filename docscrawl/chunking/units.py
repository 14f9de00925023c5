"""Building material of chunks: the token approximation, pieces, table splitting, sections.

Pure functions over `docscrawl.extract.model.Block`; `docscrawl.chunking.chunker` assembles them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from docscrawl.extract.model import Block

# ---- token approximation --------------------------------------------------------------

CHARS_PER_WORD_TOKEN = 8
_CJK = r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_TOKEN_RE = re.compile(
    rf"([{_CJK}]"  # one CJK character
    rf"|[^\W_{_CJK}]+"  # a run of letters and digits
    r"|([^\w\s]|_)\2*)"  # a run of one repeated punctuation or symbol character
)


TOKEN_WINDOW = 1 << 16


def _windows(text: str) -> Iterator[str]:
    """`text` in parts of at most TOKEN_WINDOW characters, cut after whitespace (no token
    holds any) where the part has some."""
    start, size = 0, len(text)
    while start < size:
        end = min(size, start + TOKEN_WINDOW)
        if end < size:
            cut = max(text.rfind(" ", start, end), text.rfind("\n", start, end))
            end = cut + 1 if cut > start else end
        yield text[start:end]
        start = end


def count_tokens(text: str) -> int:
    """Approximate tokenizer count, no model needed (rule in the README).

    A run of letters/digits counts one token per started 8 characters, and so does a run of
    one repeated punctuation or symbol character (`.`, `---`, `__`, a code fence); every CJK
    character counts one; whitespace counts nothing.

    >>> count_tokens("Rotate keys every 90 days.")
    6
    >>> count_tokens("configuration_file")
    4
    """
    if len(text) > TOKEN_WINDOW:  # findall keeps every token: count a long text in parts
        return sum(count_tokens(part) for part in _windows(text))
    if text.isascii():
        return _count_ascii(text)
    tokens = _TOKEN_RE.findall(text)
    extra = sum((len(t) - 1) // CHARS_PER_WORD_TOKEN for t, _ in tokens
                if len(t) > CHARS_PER_WORD_TOKEN)
    return len(tokens) + extra


# The same rule for ASCII text (most of it), counted with C-level byte operations instead
# of one regex match per token (a quarter less CPU on pages' blocks): a run of L letters
# and digits counts ceil(L / 8), so each run of 8 is first replaced by one marker, and a run
# of one repeated other character (`_` included) counts ceil(L / 8) too. Whitespace is what
# `\s` matches in ASCII (also \x1c-\x1f, which `bytes.split` keeps: mapped to a space).
_ALNUM = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
_SPACE = frozenset(i for i in range(128) if chr(i).isspace())
_WORDS = bytes(ord("a") if i in _ALNUM else ord(" ") for i in range(256))  # word or gap
_MARKS = bytes(ord(" ") if i in _ALNUM or i in _SPACE else i for i in range(256))  # the rest
_EIGHT = b"a" * CHARS_PER_WORD_TOKEN
_SAME_RUN = re.compile(rb"(.)\1{0,%d}" % (CHARS_PER_WORD_TOKEN - 1), re.DOTALL)


def _count_ascii(text: str) -> int:
    """`count_tokens` of an ASCII text."""
    data = text.encode("ascii")
    words = data.translate(_WORDS)
    long_runs = 0
    if _EIGHT in words:  # a run of L > 8 counts ceil(L / 8): one per full 8, one per rest
        words = words.replace(_EIGHT, b"b")
        long_runs = words.count(b"b")
        words = words.replace(b"b", b" ")
    tokens = long_runs + words.count(b" a") + words.startswith(b"a")
    marks = data.translate(_MARKS).split()  # runs of other characters, `](` or `.`
    return tokens + len(marks) + sum(map(_EXTRA_TOKENS.__getitem__, marks))


class _ExtraTokens(dict[bytes, int]):
    """A run of marks -> its tokens beyond the first (`))` 0, `](` 1, nine `=` 1),
    remembered: a site's Markdown repeats a few hundred such runs, so `count_tokens` looks
    them up in C (`map`) instead of testing each in Python."""

    def __missing__(self, run: bytes) -> int:
        extra = len(_SAME_RUN.findall(run)) - 1
        if len(self) >= EXTRA_TOKENS_KEPT:
            self.clear()
        self[run] = extra
        return extra


EXTRA_TOKENS_KEPT = 4096
_EXTRA_TOKENS = _ExtraTokens()


# ---- pieces ---------------------------------------------------------------------------


@dataclass(slots=True)
class Piece:
    """A block, or one row or item group of a split table or list: the smallest thing a
    chunk holds."""

    ordinal: int
    kind: str
    markdown: str
    tokens: int
    part: tuple[int, int] | None = None  # (index from 1, count) of a split block


_TABLE_RULE = re.compile(r"^\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")


def split_table(markdown: str, *, limit: int) -> list[str]:
    """Row groups of a Markdown pipe table, each repeating the caption and header lines.

    Rows are packed while a group stays within `limit` tokens; a group always holds at least
    one row. Markdown that is not a recognizable table comes back whole.
    """
    lines = markdown.split("\n")
    rule = next((i for i, line in enumerate(lines) if i and _TABLE_RULE.match(line)), None)
    if rule is None or len(lines) - rule - 1 < 2:
        return [markdown]
    head, rows = lines[: rule + 1], lines[rule + 1 :]
    groups = _packed(rows, limit=limit, overhead=count_tokens("\n".join(head)))
    return ["\n".join(head + group) for group in groups]


def _packed(parts: list[str], *, limit: int, overhead: int = 0) -> list[list[str]]:
    """`parts` in order, in groups within `limit` tokens counting `overhead` (what each
    group repeats, a table's header); a group always holds at least one part."""
    groups: list[list[str]] = []
    size = 0
    for part in parts:
        tokens = count_tokens(part)
        if groups and size + tokens <= limit:
            groups[-1].append(part)
            size += tokens
        else:
            groups.append([part])
            size = overhead + tokens
    return groups


_ITEM_MARKER = re.compile(r"(?:[-*+]|\d+[.)])\s")


def split_items(markdown: str, *, limit: int) -> list[str]:
    """Groups of the top-level items of a Markdown list or definition list, each within
    `limit` tokens (an item alone may be larger; it is never cut).

    An item starts at an unindented list marker, or at an unindented line after a blank
    one (a definition list's next term); indented lines continue the item before them.
    An ordered list's later group keeps its numbers (`7.` starts a list at 7).
    """
    items: list[list[str]] = []
    blank = True
    for line in markdown.split("\n"):
        starts = bool(line) and not line[0].isspace() and (blank or _ITEM_MARKER.match(line))
        if starts or not items:
            items.append([line])
        else:
            items[-1].append(line)
        blank = not line.strip()
    if len(items) < 2:
        return [markdown]
    groups = _packed(["\n".join(item).strip("\n") for item in items], limit=limit)
    # a list keeps its tight or loose spacing: items were separated as in the block
    separator = "\n\n" if "\n\n" in markdown else "\n"
    return [separator.join(group) for group in groups]


SPLIT_KINDS = {"table": split_table, "list": split_items, "definition_list": split_items}


def block_pieces(block: Block, *, target: int, hard_max: int) -> list[Piece]:
    """One piece per block; a table, list or definition list over `hard_max` becomes row
    or item groups of about `target` (other blocks, code above all, stay whole)."""
    tokens = count_tokens(block.markdown)
    split = SPLIT_KINDS.get(block.kind)
    if split is not None and tokens > hard_max:
        parts = split(block.markdown, limit=target)
        if len(parts) > 1:
            return [
                Piece(block.ordinal, block.kind, md, count_tokens(md), (i, len(parts)))
                for i, md in enumerate(parts, 1)
            ]
    return [Piece(block.ordinal, block.kind, block.markdown, tokens)]


# ---- sections -------------------------------------------------------------------------


@dataclass(slots=True)
class Section:
    """A heading with the blocks up to the next heading, and its subsections."""

    path: list[str]
    anchor: str | None
    pieces: list[Piece] = field(default_factory=list)
    children: list[Section] = field(default_factory=list)

    @property
    def own_tokens(self) -> int:
        return sum(p.tokens for p in self.pieces)

    def subtree_tokens(self) -> int:
        return self.own_tokens + sum(c.subtree_tokens() for c in self.children)

    def subtree_pieces(self) -> list[Piece]:
        out = list(self.pieces)
        for child in self.children:
            out.extend(child.subtree_pieces())
        return out


def section_tree(blocks: list[Block], *, target: int, hard_max: int) -> Section:
    """The page as a tree of sections; the root holds the blocks before the first heading.

    A heading's parent is the nearest open heading whose path is a proper prefix of its
    own path (the extraction's heading stack already closed deeper levels).
    """
    root = Section(path=[], anchor=None)
    stack = [root]
    for block in blocks:  # top-level blocks only: `parent` is the enclosing heading's block
        pieces = block_pieces(block, target=target, hard_max=hard_max)
        if block.kind == "heading" and block.heading_path:
            path = list(block.heading_path)
            while len(stack) > 1 and not _is_proper_prefix(stack[-1].path, path):
                stack.pop()
            section = Section(path=path, anchor=block.anchor, pieces=pieces)
            stack[-1].children.append(section)
            stack.append(section)
        else:
            stack[-1].pieces.extend(pieces)
    _label_joins_first_heading(root, limit=target // PREAMBLE_FRACTION)
    return root


PREAMBLE_FRACTION = 10  # a preamble under target/10 tokens is a label of the first heading


def _label_joins_first_heading(root: Section, *, limit: int) -> None:
    """A few words before the page's first heading (gi-docgen's "Method" or "Function
    Macro" over the title, a one-line banner) belong to that heading's section, so the
    chunk holding both is cited under the heading rather than under no heading at all.
    They stay first: the section's pieces are the label, then the heading and the rest."""
    if not root.pieces or not root.children:
        return
    if sum(piece.tokens for piece in root.pieces) > limit:
        return  # an introduction of its own, not a label
    first = root.children[0]
    first.pieces[:0] = root.pieces
    root.pieces = []


def _is_proper_prefix(prefix: list[str], path: list[str]) -> bool:
    return len(prefix) < len(path) and path[: len(prefix)] == prefix


_FENCE_OPEN = re.compile(r"^(`{3,}|~{3,})")


def blocks_from_markdown(markdown: str) -> list[Block]:
    """Fallback when extraction produced no blocks: paragraphs split at blank lines outside
    code fences; no heading tree (all blocks sit at the page level)."""
    blocks: list[str] = []
    current: list[str] = []
    fence: str | None = None
    for line in markdown.replace("\r\n", "\n").split("\n"):
        opener = _FENCE_OPEN.match(line)
        if fence is None and opener:
            fence = opener.group(1)
        elif fence is not None and line.strip().startswith(fence):
            fence = None
        if not line.strip() and fence is None:
            if current:
                blocks.append("\n".join(current))
                current = []
            continue
        current.append(line)
    if current:
        blocks.append("\n".join(current))
    return [
        Block(i, "code" if _FENCE_OPEN.match(md) else "paragraph", md, [], None, "", len(md))
        for i, md in enumerate(blocks)
    ]
