"""Chunk figures of crawl outputs: `python benchmarks/chunkstats.py OUT...`.

One line per output: chunks, the share whose Markdown holds a heading that neither their
heading path nor their `sections` name (the measure of `docscrawl check`'s section
precision), headings written as links, `code_unsplit` (share of the page's code blocks
whose code sits inside one chunk; whitespace and the quote, table and code-span marks
Markdown adds around code are ignored), the share of chunks under 40 tokens, the median
token count and the chunks carrying `sections`.
"""

from __future__ import annotations

import json
import re
import statistics
import sys
from pathlib import Path

from docscrawl.inspect.check_chunks import ChunkScan

MARKUP = re.compile(r"<br>|[\s>`|\\]")
SMALL = 40


def flatten(text: str) -> str:
    return MARKUP.sub("", text)


def stats(out: Path) -> str:
    scan = ChunkScan()
    by_page: dict[str, list[str]] = {}
    tokens: list[int] = []
    with_sections = 0
    with (out / "chunks.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            chunk = json.loads(line)
            scan.add(chunk)
            by_page.setdefault(chunk["page_id"], []).append(flatten(chunk["markdown"]))
            tokens.append(int(chunk.get("token_count") or 0))
            with_sections += bool((chunk.get("metadata") or {}).get("sections"))
    code = whole = 0
    with (out / "pages.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            page = json.loads(line)
            chunks = by_page.get(page["id"], [])
            for block in page.get("code_blocks") or ():
                flat = flatten(block["code"])
                if flat:
                    code += 1
                    whole += any(flat in md for md in chunks)
    n = len(tokens) or 1
    return (f"{out.name:16s} chunks {len(tokens):6d} unnamed {scan.unnamed / n:.3f} "
            f"linked_headings {scan.linked:4d} code_unsplit {whole / code if code else 1:.3f} "
            f"under{SMALL} {sum(t < SMALL for t in tokens) / n:.3f} "
            f"median {statistics.median(tokens) if tokens else 0:.0f} sections {with_sections}")


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        print(stats(Path(arg)))
