"""Markdown text helpers: escaping, fences, code spans, indentation, quoting.

Pure string functions used by the renderer (`markdown.py`) and its parts (`tables.py`,
`callouts.py`). Nothing here looks at a tree.
"""

from __future__ import annotations

import re

from docscrawl.discovery.urls import redact_userinfo
from docscrawl.extract.urls import join

BR = "\x00"  # line-break sentinel inside inline Markdown
BLOCK_START_RE = re.compile(r"^(#{1,6}(\s|$)|>|[-+*](\s|$)|~{3,}|={3,}\s*$)")
ORDERED_START_RE = re.compile(r"^(\d+)([.)])(\s|$)")
BLOCK_START_CHARS = frozenset("#>-+*~=")  # what BLOCK_START_RE can start with
WRAP_RE = re.compile(r"^([\s\x00]*)(.*?)([\s\x00]*)$", re.DOTALL)
BACKTICKS_RE = re.compile(r"`+")
FENCE_RUN_RE = re.compile(r"`{3,}")


def join_url(base_url: str, href: str) -> str:
    """`urljoin`, but a malformed href (`http://[::1`) is kept as written, not raised.

    Memoized: a page repeats its hrefs, and the function is pure."""
    joined = join(base_url, href)
    return redact_userinfo(href) if joined is None else joined


def collapse(text: str) -> str:
    r"""Runs of whitespace as one space, none at the ends. `str.split()` splits where `\s`
    matches (both ask `Py_UNICODE_ISSPACE`): the same text as `re.sub(r"\s+", " ", text)
    .strip()`, without the regex engine."""
    return " ".join(text.split())


def finish_inline(md: str) -> str:
    """Collapse whitespace, turn line-break sentinels into newlines, trim lines (the
    sentinel is no whitespace: no run crosses it)."""
    if BR not in md:  # most runs: one line, the same as the general path's
        return collapse(md)
    lines = [collapse(line) for line in md.split(BR)]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


def wrap(inner: str, start: str, end: str | None = None) -> str:
    """Wrap the non-blank core of `inner`, keeping its outer whitespace outside."""
    match = WRAP_RE.match(inner)
    lead, core, trail = match.groups() if match else ("", inner, "")
    if not core:
        return inner
    return f"{lead}{start}{core}{start if end is None else end}{trail}"


def code_span(text: str) -> str:
    """Inline code with a backtick fence longer than any run inside."""
    if not text:
        return ""
    if "`" not in text:  # most spans: no run to outdo, no pad (no regex)
        return f"`{text}`"
    longest = max((len(run) for run in BACKTICKS_RE.findall(text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text[0] == "`" or text[-1] == "`" else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def fence(code: str, language: str | None) -> str:
    """Fenced code block; the fence is longer than any backtick run in the code."""
    if "```" not in code:  # every run shorter than the minimal fence
        return f"```{language or ''}\n{code}\n```"
    longest = max((len(run) for run in FENCE_RUN_RE.findall(code)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language or ''}\n{code}\n{fence}"


def md_url(url: str) -> str:
    url = url.replace(" ", "%20")
    return f"<{url}>" if url.count("(") != url.count(")") else url


def escape_link_text(text: str) -> str:
    return text.replace("[", "\\[").replace("]", "\\]")


def escape_block_starts(md: str) -> str:
    """Keep prose lines from reading as Markdown structure (`# `, `- `, `1. `...)."""
    if not md or (md[0] not in BLOCK_START_CHARS and not md[0].isdigit() and "\n" not in md):
        return md  # one line that neither pattern can match: most paragraphs
    lines = []
    for line in md.split("\n"):
        if not line or (line[0] not in BLOCK_START_CHARS and not line[0].isdigit()):
            lines.append(line)  # neither pattern can match: the usual line, no regex
            continue
        if BLOCK_START_RE.match(line):
            line = "\\" + line
        else:
            line = ORDERED_START_RE.sub(r"\1\\\2\3", line, count=1)
        lines.append(line)
    return "\n".join(lines)


def indent(text: str, width: int, *, first: bool = False) -> str:
    pad = " " * width
    lines = text.split("\n")
    return "\n".join(
        (pad + line if line and (i or first) else line) for i, line in enumerate(lines)
    )


Parts = list[tuple[str, str]]  # (block kind, markdown)


def join_item(parts: Parts) -> str:
    """Blocks of one list item: a nested list hugs the text before it."""
    out = ""
    previous = ""
    for kind, md in parts:
        if not md:
            continue
        if not out:
            out = md
        elif kind == "list" and previous == "paragraph":
            out += "\n" + md
        else:
            out += "\n\n" + md
        previous = kind
    return out


def quote(text: str) -> str:
    return "\n".join(f"> {line}" if line else ">" for line in text.split("\n"))


def head(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0]
    return cut + "…"


def tail(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[-limit:].split(" ", 1)[-1]
    return "…" + cut
