"""Volatile text ignored by the content hash and chunk ids (rules in the README).

A rebuild of an unchanged documentation site changes timestamps, "last updated" lines,
copyright years and generated ids. `normalize_for_hash` removes or masks exactly those, line
by line, and only when a line is short and carries a date, a relative time or a commit hash
next to a telling keyword, so real content is kept. Pure: no Scrapy, no I/O.
"""

from __future__ import annotations

import re

MAX_LINE_CHARS = 160  # longer lines are prose, never dropped
_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
_DATE = (
    r"(?:\d{4}-\d{1,2}-\d{1,2}(?:[T ]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?"
    r"|\d{1,2}[/.]\d{1,2}[/.]\d{2,4}"
    rf"|{_MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}}"
    rf"|\d{{1,2}}(?:st|nd|rd|th)?\s+{_MONTH},?\s+\d{{4}}"
    rf"|{_MONTH}\s+\d{{4}}"
    r"|(?:\d+|an?)\s+(?:second|minute|hour|day|week|month|year)s?\s+ago"
    r"|yesterday|today|just now"
    r"|\d{1,2}:\d{2}(?::\d{2})?)"
)
_HASH = r"(?=[0-9a-f]*\d)[0-9a-f]{7,40}"
_DATE_RE = re.compile(rf"(?<!\w){_DATE}(?!\w)", re.I)
_HASH_RE = re.compile(rf"(?<![\w-]){_HASH}(?![\w-])")
_DECORATION = re.compile(r"^[\s>*_~`#|-]+|[\s*_~`|.]+$")
_UPDATED = re.compile(
    r"^(?:(?:this\s+)?(?:page|document|article|doc)\s+(?:was\s+)?)?"
    r"(?:last\s+(?:updated?|modified|edited|changed|reviewed|revised|published|built|generated)"
    r"|(?:updated|modified|edited|revised|published)(?:\s+on|\s+at)?\s*:?\s*" + _DATE + r")",
    re.I,
)
_GENERATED = re.compile(
    r"^(?:(?:this\s+)?(?:page|site|document(?:ation)?|docs?)\s+(?:was\s+|were\s+)?)?"
    r"(?:generated|built|rendered|compiled|deployed)\b",
    re.I,
)
_BUILD_ID = re.compile(
    rf"^(?:build|revision|rev|commit|git\s+commit|build\s+id|sha)\s*[:#]?\s*`?{_HASH}\b", re.I
)
_REVISION = re.compile(r"\b(?:commit|revision|rev|sha)\b", re.I)
_COPYRIGHT = re.compile(r"©|&copy;|\(c\)|\bcopyright\b", re.I)
_YEAR = re.compile(r"(?<!\d)(?:19|20)\d{2}(?!\d)")
_HTML_COMMENT = re.compile(r"<!--(.*?)-->")
_FENCE = re.compile(r"^[\s>]*(`{3,}|~{3,})")
# Generated fragment ids: Sphinx `id3`, MkDocs `__codelineno-0-1`, React `:r1a:`,
# hex-suffixed (`heading-3f2a9c1b`), UUIDs.
_GENERATED_FRAGMENT = (
    r"(?:id\d+|__codelineno-[\d-]+|:r[0-9a-z]+:|[A-Za-z_-]*?[-_]?(?=[0-9a-f-]*\d)[0-9a-f-]{8,})"
)
_FRAGMENT_IN_LINK = re.compile(rf"(\]\([^)\s]*#){_GENERATED_FRAGMENT}(?=[)\s])")
_ID_ATTRIBUTE = re.compile(rf"""(\b(?:id|name|href)=["']#?){_GENERATED_FRAGMENT}(?=["'])""")
_CACHE_BUSTER = re.compile(r"(\]\([^)\s?]*)\?(?:v|ver|version|h|hash|cb|t|ts|_)=[^)\s]*")
_HASHED_ASSET = re.compile(r"(\]\([^)\s]*?[.-])(?=[0-9a-f]*\d)[0-9a-f]{8,}(\.[A-Za-z0-9]+\))")
MASK = "~"


_MAYBE_VOLATILE = re.compile(  # cheap first test: the start of a line `is_volatile_line` drops
    r"^[\s>*_~`#|-]*(?:this|page|document|article|doc|site|last|updated|modified|edited"
    r"|revised|published|generated|built|rendered|compiled|deployed|build|revision|rev|commit"
    r"|git|sha)",
    re.I,
)


def is_volatile_line(line: str) -> bool:
    """A short line that only states when or from what revision the page was built."""
    if not _MAYBE_VOLATILE.match(line):
        return False
    core = _DECORATION.sub("", line)
    if not core or len(core) > MAX_LINE_CHARS:
        return False
    if _UPDATED.match(core):
        return bool(_DATE_RE.search(core))
    if _GENERATED.match(core):
        return bool(_DATE_RE.search(core) or (_HASH_RE.search(core) and _REVISION.search(core)))
    return bool(_BUILD_ID.match(core))


def _mask_line(line: str, mask_links: bool = True) -> str:
    if "<!--" in line:
        line = _HTML_COMMENT.sub(_drop_dated_comment, line)
    if len(line) <= MAX_LINE_CHARS and _copyright(line):
        line = _YEAR.sub("YYYY", line)
    if mask_links and "](" in line:
        line = _FRAGMENT_IN_LINK.sub(rf"\1{MASK}", line)
        line = _CACHE_BUSTER.sub(r"\1", line)
        line = _HASHED_ASSET.sub(rf"\1{MASK}\2", line)
    if "=" in line:
        line = _ID_ATTRIBUTE.sub(rf"\1{MASK}", line)
    return line


def _copyright(line: str) -> bool:
    """`_COPYRIGHT.search(line)`, asked only of a line holding one of its words in some case:
    the case-blind regex tries every position. (Under IGNORECASE, c, o, p, y and r match only
    their ASCII cases, so `lower()` keeps "opyr" of any match whole.)"""
    low = line.lower()
    return (("©" in line or "opyr" in low or "(c)" in low or "&copy;" in low)
            and _COPYRIGHT.search(line) is not None)


def _drop_dated_comment(match: re.Match[str]) -> str:
    body = match.group(1)
    return "" if _DATE_RE.search(body) or _HASH_RE.search(body) else match.group()


def normalize_for_hash(markdown: str, *, mask_links: bool = True) -> str:
    """Markdown with volatile text removed or masked (see the module docstring).

    Lines inside fenced code blocks are never touched: code is content. `mask_links=False`
    leaves link destinations alone, for callers that drop them afterwards anyway
    (`dedup.content.normalize_markdown`): the result they hash is the same.
    """
    if "\r" in markdown:
        markdown = markdown.replace("\r\n", "\n").replace("\r", "\n")
    memo = _LINE_MEMOS[mask_links].get  # `_line_for_hash`'s memo, asked here first
    out: list[str] = []
    append = out.append
    # No fence can open without three backticks or tildes: most chunks hold none.
    fenced = "```" in markdown or "~~~" in markdown
    fence: str | None = None
    for line in markdown.split("\n"):
        if fence is not None:
            bare = line.strip().lstrip("> ").strip()
            # the closing fence: `fence`'s character only, at least as many
            if bare and not bare.strip(fence[0]) and len(bare) >= len(fence):
                fence = None
            append(line)
        elif fenced and (opener := _FENCE.match(line)):
            fence = opener.group(1)
            append(line)
        else:
            hashed = memo(line, _ABSENT)
            if hashed is _ABSENT:
                hashed = _line_for_hash(line, mask_links)
            if hashed is not None:
                append(hashed)  # type: ignore[arg-type]
    return "\n".join(out)


# Lines outside code as `normalize_for_hash` keeps them (None: dropped), by line: a page's
# lines are hashed twice, for its content hash and again in its chunks' ids. Bounded: at
# most LINE_MEMO entries (emptied when full) of lines up to LINE_MEMO_CHARS.
LINE_MEMO = 1024
LINE_MEMO_CHARS = 2000
_LINE_MEMOS: dict[bool, dict[str, str | None]] = {True: {}, False: {}}
_ABSENT = object()


def _line_for_hash(line: str, mask_links: bool) -> str | None:
    memo = _LINE_MEMOS[mask_links]
    found = memo.get(line, _ABSENT)
    if found is not _ABSENT:
        return found  # type: ignore[return-value]
    hashed = None if is_volatile_line(line) else _mask_line(line, mask_links)
    if len(line) <= LINE_MEMO_CHARS:
        if len(memo) >= LINE_MEMO:
            memo.clear()
        memo[line] = hashed
    return hashed
