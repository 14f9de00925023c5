"""all-MiniLM-L6-v2 run by onnxruntime: the numpy pass's weights as an ONNX graph.

The graph is built with `onnx.helper` from the weights `minilm.MiniLM` already loads
(nothing is exported or downloaded): BERT's six layers, the attention as onnxruntime's
MultiHeadAttention (15 % less CPU than written out in MatMul, Softmax and Transpose;
under int8 QAttention, the q, k, v projection with it, another 8 %). The
tokenizer, the embedding layer, the padding and the mean pooling stay the numpy pass's.
`int8` stores the four dense matrices of each layer as int8, one scale per output column
(symmetric), run by onnxruntime's DynamicQuantizeMatMul, the q, k, v one by QAttention
(a batch's activations are quantized at run time, one scale per batch); the attention
products and the layer norms stay float32. Building the graph and importing onnx cost
0.8 s of CPU, so the model is written once beside the cached weights (int8 11 MB, fp32
43 MB) and later loads read it.

onnxruntime and onnx are the `semantic` extra; without them `embed._minilm` runs the numpy
pass. One thread, as the numpy pass: an index build is one process among others.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

from docscrawl.search.minilm import (
    HEADS,
    LAYERS,
    LN_EPS,
    MiniLM,
    cached,
    layer_weights,
    read_safetensors,
)

PRECISIONS = ("fp32", "int8")
BACKENDS = ("numpy", *(f"onnx-{p}" for p in PRECISIONS))
# what `minilm` runs on when onnxruntime is installed and no backend is named. onnx-int8
# builds `wordllama+minilm` at 0.58x the crawl's CPU against numpy's 2.1x, retrieving
# within a question of numpy on both question sets (docs/search.md): the same vectors
# to within cosine 0.98 at a quarter of the CPU, so it runs wherever it can
PREFERRED = "onnx-int8"
OPSET = 17                  # LayerNormalization
MS_DOMAIN = "com.microsoft"  # DynamicQuantizeMatMul, Gelu
# in the cached model's name: bump it when build_model or quantized change
GRAPH_VERSION = "g3"


def available() -> bool:
    """Whether onnxruntime and onnx are installed (the `semantic` extra); neither is
    imported here (onnx's import alone costs 0.5 s of CPU)."""
    try:
        return all(importlib.util.find_spec(name) is not None for name in ("onnxruntime", "onnx"))
    except ValueError:      # a module whose spec is unset: treated as missing
        return False


def quantized(matrix: Any) -> tuple[Any, Any]:
    """A float (in, out) matrix as int8 and one scale per output column: symmetric, so
    no zero point; the largest magnitude of each column maps to 127."""
    import numpy as np

    scale = np.abs(matrix).max(axis=0) / 127.0
    scale = np.where(scale > 0, scale, 1.0).astype(np.float32)
    values = np.clip(np.rint(matrix / scale), -127, 127).astype(np.int8)
    return values, scale


class _Graph:
    """Nodes and initializers of the graph being built, with fresh names."""

    def __init__(self, precision: str) -> None:
        self.precision = precision
        self.nodes: list[Any] = []
        self.weights: list[Any] = []
        self._count = 0

    def name(self, stem: str) -> str:
        self._count += 1
        return f"{stem}_{self._count}"

    def const(self, stem: str, value: Any) -> str:
        from onnx import numpy_helper

        name = self.name(stem)
        self.weights.append(numpy_helper.from_array(value, name))
        return name

    def op(self, kind: str, *inputs: str, domain: str = "", **attrs: Any) -> str:
        from onnx import helper

        out = self.name(kind.lower())
        self.nodes.append(helper.make_node(kind, list(inputs), [out], domain=domain,
                                           **attrs))
        return out

    def dense(self, x: str, weight_bias: tuple[Any, Any]) -> str:
        """x @ W + b, W int8 per-channel under `int8`."""
        weight, bias = weight_bias
        if self.precision == "int8":
            values, scale = quantized(weight)
            return self.op("DynamicQuantizeMatMul", x, self.const("w", values),
                           self.const("s", scale), "", self.const("b", bias),
                           domain=MS_DOMAIN)
        return self.op("Add", self.op("MatMul", x, self.const("w", weight)),
                       self.const("b", bias))

    def attention(self, x: str, weight_bias: tuple[Any, Any]) -> str:
        """Self-attention over x (its q, k and v one dense layer apart), masked by the
        graph's input `mask`. Under `int8`, onnxruntime's QAttention: x quantized as
        DynamicQuantizeMatMul quantizes it (uint8, one scale and zero point per batch) and
        the same int8 matrix and column scales, the projection and the attention in one
        node; on Flask's 423 section texts 0.69 s of CPU against 0.75 s for
        DynamicQuantizeMatMul, Split and MultiHeadAttention, the float16 vectors equal."""
        import numpy as np
        from onnx import helper

        weight, bias = weight_bias
        if self.precision == "int8":
            values, scale = quantized(weight)
            q8, q_scale, q_zero = self.name("x8"), self.name("xs"), self.name("xz")
            self.nodes.append(helper.make_node("DynamicQuantizeLinear", [x],
                                               [q8, q_scale, q_zero]))
            return self.op("QAttention", q8, self.const("w", values), self.const("b", bias),
                           q_scale, self.const("s", scale), "mask", q_zero,
                           domain=MS_DOMAIN, num_heads=HEADS)
        qkv = self.dense(x, weight_bias)
        sizes = self.const("split", np.array([weight.shape[1] // 3] * 3, dtype=np.int64))
        q, k, v = (self.name("qkv") for _ in range(3))
        self.nodes.append(helper.make_node("Split", [qkv, sizes], [q, k, v], axis=-1))
        return self.op("MultiHeadAttention", q, k, v, "", "mask", domain=MS_DOMAIN,
                       num_heads=HEADS)

    def norm(self, x: str, weight_bias: tuple[Any, Any]) -> str:
        weight, bias = weight_bias
        return self.op("LayerNormalization", x, self.const("g", weight),
                       self.const("beta", bias), axis=-1, epsilon=LN_EPS)


def build_model(w: dict[str, Any], precision: str) -> bytes:
    """The serialized ONNX model of BERT's six layers with the weights `w` (as
    `MiniLM._load` holds them). Inputs: the embedding layer's output (batch, length,
    hidden; computed in numpy from the mapped table, which keeps 47 MB out of the model)
    and the mask of real tokens (batch, length; int32); output: the last hidden states."""
    from onnx import TensorProto, helper

    g = _Graph(precision)
    hidden = int(w["pos"].shape[1])
    x = "x"
    for i in range(LAYERS):
        context = g.attention(x, w[f"qkv{i}"])
        x = g.norm(g.op("Add", g.dense(context, w[f"attn_out{i}"]), x), w[f"attn_ln{i}"])
        inner = g.op("Gelu", g.dense(x, w[f"inter{i}"]), domain=MS_DOMAIN)
        x = g.norm(g.op("Add", g.dense(inner, w[f"out{i}"]), x), w[f"out_ln{i}"])
    g.nodes.append(helper.make_node("Identity", [x], ["hidden"]))
    graph = helper.make_graph(
        g.nodes, f"minilm-{precision}",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "length", hidden]),
         helper.make_tensor_value_info("mask", TensorProto.INT32, ["batch", "length"])],
        [helper.make_tensor_value_info("hidden", TensorProto.FLOAT,
                                       ["batch", "length", hidden])],
        initializer=g.weights)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET),
                                                    helper.make_opsetid(MS_DOMAIN, 1)])
    return bytes(model.SerializeToString())


class OnnxMiniLM(MiniLM):
    """The `minilm` embedder with its six layers run by onnxruntime."""

    # texts per run: on Flask's 449 section texts (34 tokens on average) batches of 8
    # took 0.80-0.83 s of CPU, of 32 1.03-1.07 s, of 128 1.42-1.45 s (the activations of
    # a batch share one int8 scale: a smaller batch is also a little closer to numpy)
    batch_texts = 8

    def __init__(self, archive: Path, max_tokens: int, precision: str) -> None:
        super().__init__(archive, max_tokens)
        if precision not in PRECISIONS:
            raise ValueError(f"precision {precision!r}: one of {', '.join(PRECISIONS)}")
        self.precision = precision
        self.backend = f"onnx-{precision}"
        self.key = f"minilm-{max_tokens}-{self.backend}"
        self._session: Any = None

    def _load(self) -> None:
        import onnxruntime

        self._load_embeddings()   # the layers' weights are read only to build the model
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        # onnxruntime's SkipLayerNormalization (the residual Add and LayerNormalization
        # fused) ran slower than the two apart: 384 texts of 48 tokens took 0.94-1.03 s
        # of CPU without it against 1.25-1.36 s with it, the vectors as close to numpy's
        self._session = onnxruntime.InferenceSession(
            self._model(), options, providers=["CPUExecutionProvider"],
            disabled_optimizers=["SkipLayerNormFusion"])

    def _model(self) -> str | bytes:
        """The model file beside the cached weights (importing onnx and building the
        graph cost 0.8 s of CPU, more than a query: a search process reads the file),
        written at the first load; the model's bytes when no cache can be written."""
        weights = self._weights
        target = (weights.with_name(f"{weights.stem}-{self.backend}-{GRAPH_VERSION}.onnx")
                  if isinstance(weights, Path) else None)
        if target is not None and target.is_file():
            return str(target)
        model = build_model({**self._w, **layer_weights(read_safetensors(weights))},
                            self.precision)
        if target is None:
            return model
        written = cached(target, model)
        return str(written) if isinstance(written, Path) else written

    def forward(self, batch: list[list[int]]) -> Any:
        import numpy as np

        tokens, mask = self.padded(batch)
        (hidden,) = self._session.run(None, {"x": self.embedded(tokens),
                                             "mask": mask.astype(np.int32)})
        return self.pooled(hidden, mask)
