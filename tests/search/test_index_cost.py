"""benchmarks/index_cost.py's figure beside the CPU: how many sections a section model
embedded (what the hybrid's build grows with), read from a real index."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from benchmarks import index_cost
from docscrawl.search import SearchIndex
from docscrawl.search.minilm import PIP_COMMAND
from tests.search.conftest import copy_output


@pytest.mark.skipif(importlib.util.find_spec("all_minilm_l6_v2") is None,
                    reason=f"the MiniLM model is not installed ({PIP_COMMAND})")
def test_section_count_reads_the_sections_a_build_embedded(
        demo: tuple[Path, Path, str], tmp_path: Path) -> None:
    out = copy_output(demo[1], tmp_path / "out")
    SearchIndex.open(out, embedder="wordllama", update=False).refresh()
    assert index_cost.section_count(out) == 0       # no section model: none embedded
    index = SearchIndex.open(out, embedder="wordllama+minilm", update=False)
    index.refresh()
    embedded = index.embedded_sections
    index.db.close()
    assert embedded > 0
    assert index_cost.section_count(out) == embedded
