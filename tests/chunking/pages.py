"""Test pages written as small Markdown documents, turned into a `PageExtract`.

Headings take an anchor as `## Title {#anchor}`; blocks are separated by blank lines.
"""

from __future__ import annotations

import re

from docscrawl.chunking.units import blocks_from_markdown
from docscrawl.extract.model import Block, CodeBlock, Heading, PageExtract

HEADING = re.compile(r"^(#{1,6}) (.*?)(?: \{#([\w-]+)\})?$")


def make_extract(markdown: str) -> PageExtract:
    """Blocks with heading paths and anchors as the extraction's heading stack makes them."""
    blocks: list[Block] = []
    codes: list[CodeBlock] = []
    headings: list[Heading] = []
    open_: list[Heading] = []
    for raw in blocks_from_markdown(markdown.strip("\n")):
        md, ordinal = raw.markdown, raw.ordinal
        match = HEADING.match(md)
        if match:
            level = len(match.group(1))
            while open_ and open_[-1].level >= level:
                open_.pop()
            heading = Heading(level, match.group(2), match.group(3),
                              [h.text for h in open_] + [match.group(2)])
            open_.append(heading)
            headings.append(heading)
            md, kind = f"{match.group(1)} {match.group(2)}", "heading"
        elif md.startswith("```"):
            kind = "code"
            language = md.split("\n", 1)[0].strip("`") or None
            code = md.split("\n", 1)[1].rsplit("\n", 1)[0]
            codes.append(CodeBlock(code, language, "source", [h.text for h in open_], "",
                                   ordinal))
        elif md.startswith("|"):
            kind = "table"
        elif md.startswith("- "):
            kind = "list"
        else:
            kind = "paragraph"
        anchor = next((h.anchor for h in reversed(open_) if h.anchor), None)
        blocks.append(Block(ordinal, kind, md, [h.text for h in open_], anchor,
                            f"/html/body/main/*[{ordinal + 1}]", len(md)))
    body = "\n\n".join(b.markdown for b in blocks)
    return PageExtract(markdown=body + "\n", blocks=blocks, code_blocks=codes, headings=headings)


def words(n: int, seed: str = "word") -> str:
    """A paragraph of `n` distinct short words (one approximate token each)."""
    return " ".join(f"{seed}{i}" for i in range(n))
