"""Chunking a page as extraction really produces it: every block lands in a chunk."""

from __future__ import annotations

from pathlib import Path

import parsel
import pytest

from docscrawl.chunking.chunker import chunk_page
from docscrawl.extract.page import extract_page

DEMO = Path(__file__).resolve().parents[2] / "fixtures" / "sites" / "demo" / "docs"


@pytest.mark.parametrize("page", ["guide/configure.html", "guide/install.html",
                                  "api/client.html", "index.html"])
def test_every_block_is_in_exactly_one_chunk(page: str) -> None:
    url = f"http://d.example/docs/{page}"
    extract = extract_page(parsel.Selector(text=(DEMO / page).read_text()).root, url)
    chunks = chunk_page(extract, page_id="sha256:p", canonical_url=url, title=extract.title,
                        version=None, breadcrumbs=["Docs"], retrieved_at="2026-01-01T00:00:00Z",
                        content_hash="sha256:h")
    covered = [n for c in chunks for n in range(c["metadata"]["block_range"][0],
                                                 c["metadata"]["block_range"][1] + 1)]
    assert sorted(covered) == [b.ordinal for b in extract.blocks]
    joined = "\n\n".join(c["markdown"] for c in chunks)
    for block in extract.blocks:
        assert block.markdown in joined
    assert all(c["text"].startswith("Docs | ") for c in chunks)
