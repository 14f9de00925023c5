"""Chunks as LangChain Documents and LlamaIndex TextNodes, metadata = the chunk contract."""

from __future__ import annotations

from pathlib import Path

import pytest

from docscrawl.search.loaders import load_langchain_documents, load_llamaindex_nodes
from tests.conftest import read_jsonl


def test_langchain_documents(demo: tuple[Path, Path, str]) -> None:
    pytest.importorskip("langchain_core")
    _, out, _ = demo
    chunks = read_jsonl(out / "chunks.jsonl")
    docs = load_langchain_documents(out)
    assert len(docs) == len(chunks)
    assert docs[0].id == chunks[0]["id"] and docs[0].page_content == chunks[0]["text"]
    assert docs[0].metadata["source_url"] == chunks[0]["metadata"]["source_url"]
    assert "inbound_links" in docs[0].metadata and docs[0].metadata["citation"]


def test_llamaindex_nodes_of_one_version(demo: tuple[Path, Path, str]) -> None:
    pytest.importorskip("llama_index.core")
    _, out, _ = demo
    nodes = load_llamaindex_nodes(out, version="3.6")
    assert nodes and {n.metadata["version"] for n in nodes} == {"3.6"}
    shown = nodes[0].get_content(metadata_mode="llm")
    assert "inbound_links" not in shown and "source_url" in shown
