"""An embedder wrapper for incremental-index tests: the real model, counting its texts."""

from __future__ import annotations

from typing import Any


class Counting:
    """The real embedder, recording every text it is asked to embed (`progress_every`:
    how often the index build prints a progress line; tests set it low to see one)."""

    def __init__(self, inner: Any, *, progress_every: int | None = None) -> None:
        self.inner = inner
        self.texts: list[str] = []
        for name in ("name", "key", "coarse_dims", "semantic_weight"):
            setattr(self, name, getattr(inner, name))
        self.progress_every = (progress_every if progress_every is not None
                               else getattr(inner, "progress_every", 0))

    def embed(self, texts: Any) -> Any:
        self.texts += list(texts)
        return self.inner.embed(texts)
