"""MiniLM run by onnxruntime (the `semantic` extra): its vectors are the numpy pass's (fp32)
or close to them (int8), numpy runs when onnxruntime is missing, and an index built by one
backend is rebuilt by another."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from docscrawl.search import SearchIndex
from docscrawl.search.embed import EmbedderError, load_section_embedder
from docscrawl.search.minilm import PIP_COMMAND
from tests.conftest import ROOT
from tests.search.conftest import copy_output
from tests.search.counting import Counting

pytestmark = pytest.mark.skipif(importlib.util.find_spec("all_minilm_l6_v2") is None,
                                reason=f"the MiniLM model is not installed ({PIP_COMMAND})")
needs_onnx = pytest.mark.skipif(
    importlib.util.find_spec("onnxruntime") is None or importlib.util.find_spec("onnx") is None,
    reason="onnxruntime is not installed (pip install 'docscrawl[semantic]')")

# section texts as sections.section_text writes them, of several sites, and odd ones
TEXTS = [
    "25.1. Routine Vacuuming > 25.1.2. Recovering Disk Space: In PostgreSQL, an UPDATE or "
    "DELETE of a row does not immediately remove the old version of the row.",
    "git-reset(1) Manual Page: git-reset - Reset current HEAD to the specified state",
    "MongoDB with MongoEngine: Using a document database like MongoDB is a common "
    "alternative to relational SQL databases.",
    "Advanced Usage > Session Objects: The Session object allows you to persist certain "
    "parameters across requests.",
    "How do I pause a crawl and resume it later?",
    "json.dumps(obj, indent=2) --save-exact std::vector<int> HTTPServerError",
    "naïve straße 日本語のドキュメント emoji🙂",
    "Installation",
    "word " * 400,  # longer than the token budget: truncated
]
# int8 against the numpy pass: the least cosine over TEXTS was 0.987; over 9,996 sections
# of five question-set crawls the least was 0.980, the mean 0.994 (docs/search.md)
INT8_COSINE = 0.97
INT8_MEAN_COSINE = 0.985


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DOCSCRAWL_CACHE", str(tmp_path_factory.mktemp("cache")))
        loaded = {backend: load_section_embedder(f"wordllama+minilm@{backend}")
                  for backend in ("numpy", "onnx-fp32", "onnx-int8")}
        for model in loaded.values():
            model.embed(["load the weights while the cache is set"])  # type: ignore[union-attr]
    return loaded


@needs_onnx
def test_onnx_vectors_are_the_numpy_pass(models: dict[str, Any]) -> None:
    reference = models["numpy"].embed(TEXTS)
    fp32 = models["onnx-fp32"].embed(TEXTS)
    int8 = models["onnx-int8"].embed(TEXTS)
    assert fp32.shape == int8.shape == (len(TEXTS), 384) and int8.dtype == np.float32
    assert np.allclose(np.linalg.norm(int8, axis=1), 1, atol=1e-5)
    assert ((fp32 * reference).sum(axis=1) >= 0.9999).all()
    cosines = (int8 * reference).sum(axis=1)
    assert cosines.min() >= INT8_COSINE and cosines.mean() >= INT8_MEAN_COSINE, cosines
    # int8 moves a vector, but not past a different text's: each text's nearest numpy
    # vector is its own
    assert ((int8 @ reference.T).argmax(axis=1) == np.arange(len(TEXTS))).all()
    assert not models["onnx-int8"].embed([]).any()


@needs_onnx
def test_a_cached_model_is_run_without_reading_the_layers(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first load builds and caches the model file from the layers' weights; a later
    load (every index update and query) runs that file and never copies the 44 MB of
    layer weights (0.3 s of CPU), with the same vectors."""
    monkeypatch.setenv("DOCSCRAWL_CACHE", str(tmp_path))
    first = load_section_embedder("wordllama+minilm@onnx-int8")
    vectors = first.embed(TEXTS)  # type: ignore[union-attr]
    assert list(tmp_path.glob("*-onnx-int8-*.onnx"))
    later = load_section_embedder("wordllama+minilm@onnx-int8")
    assert np.array_equal(later.embed(TEXTS), vectors)  # type: ignore[union-attr]
    assert not [name for name in later._w if name.startswith("qkv")]  # type: ignore[union-attr]


@needs_onnx
def test_int8_matrices_are_per_column_symmetric() -> None:
    from docscrawl.search.minilm_onnx import quantized

    rng = np.random.default_rng(7)
    matrix = rng.normal(size=(64, 16)).astype(np.float32)
    matrix[:, 3] *= 100      # one column far larger: its scale must not coarsen the rest
    matrix[:, 5] = 0
    values, scale = quantized(matrix)
    assert values.dtype == np.int8 and scale.shape == (16,)
    assert (np.abs(values).max(axis=0)[scale != 1] == 127).all()
    assert (np.abs(values * scale - matrix) <= scale / 2 + 1e-6).all()
    assert not values[:, 5].any()


@needs_onnx
def test_backend_is_in_the_key_and_preferred_unless_named(models: dict[str, Any]) -> None:
    from docscrawl.search.minilm_onnx import PREFERRED

    assert {m.key for m in models.values()} == {
        "minilm-48", "minilm-48-onnx-fp32", "minilm-48-onnx-int8"}
    chosen = load_section_embedder("wordllama+minilm:32")
    assert chosen is not None and chosen.backend == PREFERRED
    assert chosen.key == "minilm-32" + ("" if PREFERRED == "numpy" else f"-{PREFERRED}")
    with pytest.raises(EmbedderError, match="backend is one of numpy, onnx-fp32, onnx-int8"):
        load_section_embedder("wordllama+minilm@onnx-int4")


WITHOUT_ONNX = """
import json, sys
sys.modules["onnxruntime"] = None  # Python's way to make a package uninstalled
sys.modules["onnx"] = None
from docscrawl.search.embed import EmbedderError, load_section_embedder
model = load_section_embedder("wordllama+minilm")
vector = model.embed(["Advanced Usage > Session Objects"])[0]
try:
    load_section_embedder("wordllama+minilm@onnx-int8")
    named = ""
except EmbedderError as exc:
    named = str(exc)
print(json.dumps({"key": model.key, "backend": model.backend, "norm": float(vector @ vector),
                  "named": named}))
"""


def test_without_onnxruntime_minilm_runs_in_numpy_and_a_named_backend_says_so(
        tmp_path: Path) -> None:
    pytest.importorskip("wordllama")
    result = subprocess.run([sys.executable, "-c", WITHOUT_ONNX], cwd=ROOT, text=True,
                            capture_output=True, timeout=300,
                            env={**os.environ, "DOCSCRAWL_CACHE": str(tmp_path)})
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout)
    assert found["key"] == "minilm-48" and found["backend"] == "numpy"
    assert abs(found["norm"] - 1) < 1e-5
    assert "onnxruntime is not installed (pip install 'docscrawl[semantic]')" in found["named"]


def _section_rows(index: SearchIndex) -> int:
    return int(index.db.execute("SELECT count(*) FROM sections").fetchone()[0])


@pytest.mark.e2e
@needs_onnx
def test_a_backend_change_rebuilds_the_index(demo: tuple[Path, Path, str], tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("wordllama")
    monkeypatch.setenv("DOCSCRAWL_CACHE", str(tmp_path / "cache"))
    out = copy_output(demo[1], tmp_path / "out")  # the session's demo crawl, no index
    built = SearchIndex.open(out, embedder="wordllama+minilm@numpy")
    numpy_rows = np.load(built.vector_files()["sections"])
    assert built.meta("embedder").endswith("+minilm-48/240")  # type: ignore[union-attr]
    built.close()
    index = SearchIndex.open(out, embedder="wordllama+minilm@onnx-int8", update=False)
    index.sections = counting = Counting(index.sections)
    rebuilt = index.refresh()
    assert rebuilt.full and len(counting.texts) == _section_rows(index) == len(numpy_rows) - 1
    assert index.meta("embedder").endswith("+minilm-48-onnx-int8/240")  # type: ignore[union-attr]
    rows = np.load(index.vector_files()["sections"])
    counting.texts.clear()
    assert index.refresh().added == 0 and counting.texts == []
    index.close()
    again = SearchIndex.open(out, embedder="wordllama+minilm@onnx-int8", update=False)
    assert again.refresh().added == 0  # the same backend finds the index current
    again.close()
    # the same sections in the same order, each row close to the numpy build's
    cosines = (rows[:-1] * numpy_rows[:-1]).sum(axis=1)
    assert cosines.min() >= INT8_COSINE, cosines.min()
    # `docscrawl index` names both models, the section model with its backend
    done = subprocess.run([sys.executable, "-m", "docscrawl.cli", "index", str(out),
                           "--embedder", "wordllama+minilm@onnx-int8"], cwd=ROOT,
                          capture_output=True, text=True, check=True,
                          env={**os.environ, "DOCSCRAWL_CACHE": str(tmp_path / "cache")})
    assert done.stdout.rstrip().endswith(
        "; embedder wordllama + sections minilm-48-onnx-int8"), done.stdout
