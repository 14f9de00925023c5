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
    assert [n.id_ for n in load_llamaindex_nodes(out, version="v3")] == [n.id_ for n in nodes]
    shown = nodes[0].get_content(metadata_mode="llm")
    assert "inbound_links:" not in shown and "source_url:" not in shown
    assert shown.startswith("version: 3.6\nsection: ")


def test_llamaindex_embeds_the_section_and_text_not_ids_hashes_or_urls(
        demo: tuple[Path, Path, str]) -> None:
    """What LlamaIndex embeds (and shows the model) is the chunk's meaning: its title and
    heading path and its text; ids, hashes, URLs and dates stay on the node only."""
    pytest.importorskip("llama_index.core")
    from llama_index.core.schema import MetadataMode

    _, out, _ = demo
    chunks = {c["id"]: c for c in read_jsonl(out / "chunks.jsonl")}
    for node in load_llamaindex_nodes(out):
        chunk = chunks[node.id_]
        meta = chunk["metadata"]
        embedded = node.get_content(metadata_mode=MetadataMode.EMBED)
        shown = node.get_content(metadata_mode=MetadataMode.LLM)
        for text in (embedded, shown):
            assert chunk["text"] in text
            assert (meta["title"] or "Untitled") in text
            assert all(heading in text for heading in meta["heading_path"])
            assert "sha256:" not in text and "http://" not in text.replace(chunk["text"], "")
            assert meta["retrieved_at"] not in text
        assert len(embedded) - len(chunk["text"]) <= len(meta["title"] or "") + 20 + sum(
            len(h) + 3 for h in meta["heading_path"])
        assert node.metadata["content_hash"] == meta["content_hash"]  # kept for the caller
        assert node.metadata["chunk_id"] == chunk["id"] and node.metadata["source_url"]


def test_langchain_text_is_the_chunk_and_metadata_names_its_source(
        demo: tuple[Path, Path, str]) -> None:
    pytest.importorskip("langchain_core")
    _, out, _ = demo
    for doc in load_langchain_documents(out):
        assert "sha256:" not in doc.page_content  # embedded: the text alone
        assert doc.metadata["source"] == doc.metadata["source_url"]  # LangChain's key
        assert doc.metadata["section"].startswith(doc.metadata["title"] or "Untitled")
        assert doc.metadata["citation"].startswith(doc.metadata["section"])
