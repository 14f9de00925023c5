"""`chunk_anchors`: the sections a chunk holds, asked by the inbound-link pass and the
search index alike (one home, so the two never disagree on a chunk)."""

from __future__ import annotations

from docscrawl.chunking.chunker import chunk_anchors


def test_own_anchor_then_listed_sections() -> None:
    meta = {"anchor": "install", "source_url": "https://d.test/p.html#other",
            "sections": [{"anchor": "pip"}, {"anchor": None}, {"heading_path": ["x"]},
                         "not a section", {"anchor": "conda"}]}
    assert chunk_anchors(meta) == ["install", "pip", "conda"]


def test_the_source_urls_fragment_when_the_chunk_names_no_anchor() -> None:
    assert chunk_anchors({"source_url": "https://d.test/p.html#a#b"}) == ["a#b"]
    assert chunk_anchors({"source_url": "https://d.test/p.html"}) == []
    assert chunk_anchors({}) == []
