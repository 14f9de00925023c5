"""Chunks as LangChain `Document`s and LlamaIndex `TextNode`s.

    from docscrawl.search.loaders import load_langchain_documents, load_llamaindex_nodes
    docs = load_langchain_documents("output/docs.example.com")          # langchain-core
    nodes = load_llamaindex_nodes("output/docs.example.com", version="2.8")  # llama-index-core

Each object's text is the chunk's `text` (context label line + Markdown) and its metadata
is the chunk contract's `metadata` plus `chunk_id`, `page_id`, `section` (title › heading
path), `citation` and `source` (the URL with the section's anchor: LangChain's name for
where a document came from). LlamaIndex embeds and shows the model a node's text with
its metadata: there only `section` (and `version`, for the model) go with the text; ids,
hashes, URLs, dates and counts would be most of what is embedded, and say nothing about
what the chunk means. The frameworks are imported only when their loader is called
(extras `langchain`, `llamaindex`).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from docscrawl.jsonl import jsonl_path, read_jsonl
from docscrawl.search.hits import section_label
from docscrawl.search.versions import candidates

# The metadata LlamaIndex embeds with a node's text, and what it shows the model; the
# rest (ids, hashes, URLs, dates, counts, link lists) stays on the node for the caller.
EMBED_KEYS = ("section",)
LLM_KEYS = ("section", "version")


def iter_chunks(out: str | Path, *, version: str | None = None) -> Iterator[dict[str, Any]]:
    """Every chunk record of an output directory, or of the versions `version` names in
    any spelling (`18.20.4` or `v18` for `v18.20.4`: `docscrawl.search.versions`)."""
    path = jsonl_path(Path(out), "chunks.jsonl")  # or chunks.jsonl.gz
    named: dict[str | None, bool] = {}
    if not path.is_file():
        raise FileNotFoundError(f"{out}: no chunks.jsonl (not a crawl output directory)")
    for record in read_jsonl(path):  # a torn last line (a crawl still running) skipped
        label = (record.get("metadata") or {}).get("version")
        if label not in named:
            named[label] = version is None or bool(
                label and candidates(version, [label], None))
        if named[label]:
            yield record


def chunk_metadata(record: dict[str, Any]) -> dict[str, Any]:
    """The chunk contract's metadata, with the chunk's ids, its section and source, and
    a one-line citation."""
    meta = dict(record.get("metadata") or {})
    section = section_label(meta)
    version = meta.get("version")
    meta.update({
        "chunk_id": record.get("id"),
        "page_id": record.get("page_id"),
        "section": section,
        "source": meta.get("source_url"),
        "citation": ", ".join([section, f"version {version}" if version else "unversioned",
                               str(meta.get("source_url") or ""),
                               str(meta.get("retrieved_at") or "")[:10]]),
    })
    return meta


def load_langchain_documents(out: str | Path, *, version: str | None = None) -> list[Any]:
    """LangChain `Document`s, one per chunk (`id` = chunk id)."""
    try:
        from langchain_core.documents import Document
    except ImportError as exc:
        raise ImportError("load_langchain_documents needs langchain-core "
                          "(pip install 'docscrawl[langchain]')") from exc
    return [Document(page_content=str(r.get("text") or ""), metadata=chunk_metadata(r),
                     id=r.get("id"))
            for r in iter_chunks(out, version=version)]


def load_llamaindex_nodes(out: str | Path, *, version: str | None = None) -> list[Any]:
    """LlamaIndex `TextNode`s, one per chunk (`id_` = chunk id); all metadata is kept,
    only `EMBED_KEYS` are embedded with the text and `LLM_KEYS` shown to the model."""
    try:
        from llama_index.core.schema import TextNode
    except ImportError as exc:
        raise ImportError("load_llamaindex_nodes needs llama-index-core "
                          "(pip install 'docscrawl[llamaindex]')") from exc
    nodes = []
    for record in iter_chunks(out, version=version):
        meta = chunk_metadata(record)
        nodes.append(TextNode(
            text=str(record.get("text") or ""), id_=str(record.get("id")), metadata=meta,
            excluded_embed_metadata_keys=[key for key in meta if key not in EMBED_KEYS],
            excluded_llm_metadata_keys=[key for key in meta if key not in LLM_KEYS]))
    return nodes
