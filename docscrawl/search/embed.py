"""Semantic vectors from an embedding model that ships inside a Python package.

Nothing is downloaded at run time. The default is wordllama's bundled static model
(256 dimensions, tens of microseconds per text on one core); another embedder can be
named when it is installed and its model is already on disk:

    wordllama                      the default (extra `search`)
    sentence-transformers:NAME     a SentenceTransformer model name or path
    fastembed:NAME                 a fastembed TextEmbedding model name
    none                           lexical search only

Vectors are unit length, stored as float16 in the index; cosine is a dot product.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

# One query is one matrix-vector product: BLAS threads only contend for memory bandwidth
# and for cores other processes use.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

DEFAULT_EMBEDDER = "wordllama"
ENV_EMBEDDER = "DOCSCRAWL_EMBEDDER"


class EmbedderError(RuntimeError):
    """The named embedder cannot be loaded (not installed, model not on disk)."""


class Embedder(Protocol):
    """Texts -> unit vectors (rows of a float32 numpy array)."""

    name: str

    def embed(self, texts: Sequence[str]) -> Any: ...


class _Normalized:
    """Wraps a raw encode function; rows come out unit length, float32."""

    def __init__(self, name: str, encode: Any) -> None:
        self.name = name
        self._encode = encode

    def embed(self, texts: Sequence[str]) -> Any:
        import numpy as np

        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        vectors = np.asarray(self._encode(list(texts)), dtype=np.float32)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.maximum(norms, 1e-9)


def _wordllama() -> Embedder:
    try:
        import wordllama
    except ImportError as exc:
        raise EmbedderError("wordllama is not installed "
                            "(pip install 'docscrawl[search]')") from exc
    # The wheel carries its model and tokenizer; the loader must be pointed at them
    # and told not to download (see STACK.md).
    model = wordllama.WordLlama.load(cache_dir=Path(wordllama.__file__).parent,
                                     disable_download=True)
    return _Normalized("wordllama", lambda texts: model.embed(texts, norm=True))


def _sentence_transformers(model_name: str) -> Embedder:
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:
        raise EmbedderError("sentence-transformers is not installed") from exc
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    model = SentenceTransformer(model_name)
    return _Normalized(f"sentence-transformers:{model_name}",
                       lambda texts: model.encode(texts, batch_size=64))


def _fastembed(model_name: str) -> Embedder:
    try:
        from fastembed import TextEmbedding
    except ImportError as exc:
        raise EmbedderError("fastembed is not installed") from exc
    model = TextEmbedding(model_name=model_name, local_files_only=True)
    return _Normalized(f"fastembed:{model_name}", lambda texts: list(model.embed(texts)))


def load_embedder(spec: str | None = None) -> Embedder | None:
    """The embedder named by `spec` (else $DOCSCRAWL_EMBEDDER, else wordllama); None for
    `none`. Raises EmbedderError when it cannot be loaded."""
    spec = (spec or os.environ.get(ENV_EMBEDDER) or DEFAULT_EMBEDDER).strip()
    kind, _, model = spec.partition(":")
    try:
        if kind == "none":
            return None
        if kind == "wordllama":
            return _wordllama()
        if kind == "sentence-transformers" and model:
            return _sentence_transformers(model)
        if kind == "fastembed" and model:
            return _fastembed(model)
    except EmbedderError:
        raise
    except Exception as exc:  # a plugged-in model that is not on disk, a bad name
        raise EmbedderError(f"embedder {spec!r} failed to load: {exc}") from exc
    raise EmbedderError(f"unknown embedder {spec!r} (wordllama, sentence-transformers:NAME, "
                        "fastembed:NAME or none)")
