"""The bundled static model: words tokenized in joined groups get the ids each word gets
alone, and a text's vector is the normalised sum of its tokens' rows."""

from __future__ import annotations

import numpy as np
import pytest

from docscrawl.search.embed import TOKENIZE_GROUP, load_embedder

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
