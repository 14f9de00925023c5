"""The fusion's section list weight follows the lexical evidence (`fusion.section_gain`)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from docscrawl.search import Searcher, SearchIndex, fusion
from docscrawl.search import rank as rank_module
from docscrawl.search.sections import SECTION_WEIGHT
from tests.search.test_ranking import chunk, page, write_output

needs_minilm = pytest.mark.skipif(importlib.util.find_spec("all_minilm_l6_v2") is None,
                                  reason="the MiniLM model is not installed")


def test_section_gain_grows_as_bm25_holds_less_of_the_question() -> None:
    assert fusion.section_gain(1.0) == 1.0
    assert fusion.section_gain(0.0) == 1.0 + fusion.WEAK_LEXICAL > 1.0
    assert 1.0 < fusion.section_gain(0.6) < fusion.section_gain(0.2)
    assert fusion.section_gain(1.7) == 1.0 and fusion.section_gain(-1) == fusion.section_gain(0)


@needs_minilm
def test_the_section_list_weighs_more_when_bm25_holds_little_of_the_question(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A question whose words a chunk holds, all of them, fuses the section list at
    SECTION_WEIGHT; one sharing a word or none with any chunk, at more: bm25's first
    places are chance matches there."""
    pytest.importorskip("wordllama")
    monkeypatch.setenv("DOCSCRAWL_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "out"
    out.mkdir()
    spec = ["The Go Programming Language Specification"]
    write_output(out, [page("spec.html", spec[0], None)], [
        chunk("spec.html", spec[0], "A variable is a storage location for holding a value.",
              None, heading_path=[*spec, "Variables"], anchor="Variables"),
        chunk("spec.html", spec[0], "Each element of such a variable or value is set to "
              "the zero value for its type.", None,
              heading_path=[*spec, "The zero value"], anchor="The_zero_value")])
    weights: list[float] = []
    real = rank_module.fuse

    def spy(lists: list[tuple[float, bool, list[tuple[int, float]]]]) -> dict[int, float]:
        weights.append(lists[2][0])
        return real(lists)

    monkeypatch.setattr(rank_module, "fuse", spy)
    searcher = Searcher(SearchIndex.open(out, embedder="wordllama+minilm"))
    searcher.search("variable storage location value")
    searcher.search("what does an unset storage slot hold before anyone writes it")
    searcher.search("uninitialised memory contents")
    assert weights[0] == pytest.approx(SECTION_WEIGHT)
    assert SECTION_WEIGHT < weights[1] < weights[2]
    assert weights[2] == pytest.approx(SECTION_WEIGHT * (1 + fusion.WEAK_LEXICAL))
