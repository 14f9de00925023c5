"""Section vectors (`--embedder wordllama+minilm`): one short text per section embedded by
MiniLM, fused into each chunk of the section; an update embeds only changed sections."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import time
from pathlib import Path

import numpy as np
import pytest

from docscrawl.demo.server import StaticSite
from docscrawl.search import Searcher, SearchIndex
from docscrawl.search import rank as rank_module
from docscrawl.search.embed import EmbedderError, load_embedder, load_section_embedder
from docscrawl.search.minilm import PIP_COMMAND
from docscrawl.search.sections import lead_sentence, section_text, split_spec, starts_section
from tests.conftest import SITES, crawl
from tests.search.counting import Counting

HAS_MINILM = importlib.util.find_spec("all_minilm_l6_v2") is not None
needs_minilm = pytest.mark.skipif(not HAS_MINILM,
                                  reason=f"the MiniLM model is not installed ({PIP_COMMAND})")

# chunk Markdown as docscrawl writes it for two generator families: Sphinx (Flask 2.2's
# patterns/mongoengine.html) and AsciiDoc manual pages (git-doc's git-reset.html)
SPHINX_CHUNK = (
    "# MongoDB with MongoEngine\n\nUsing a document database like MongoDB is a common "
    "alternative to relational SQL databases. This pattern shows how to use "
    "[MongoEngine](http://mongoengine.org), a document mapper library, to integrate with "
    "MongoDB.\n\nA running MongoDB server and [Flask-MongoEngine](https://flask-mongoengine"
    ".readthedocs.io) are required.\n\n```python\npip install flask-mongoengine\n```")
ASCIIDOC_CHUNK = ("# git-reset(1) Manual Page\n\n## NAME\n\n"
                  "git-reset - Reset current HEAD to the specified state")
DOCBOOK_CHUNK = (
    "### 25.1.2. Recovering Disk Space\n\nIn PostgreSQL, an `UPDATE` or `DELETE` of a row "
    "does not immediately remove the old version of the row. This approach is necessary "
    "to gain the benefits of multiversion concurrency control.")


def test_section_text_is_title_path_and_opening_sentence() -> None:
    assert section_text("MongoDB with MongoEngine", ["MongoDB with MongoEngine"],
                        SPHINX_CHUNK) == (
        "MongoDB with MongoEngine: Using a document database like MongoDB is a common "
        "alternative to relational SQL databases.")
    # the title is the first heading's start: said once; headings inside the chunk and
    # code are not the sentence
    assert section_text("git-reset(1)", ["git-reset(1) Manual Page"], ASCIIDOC_CHUNK) == (
        "git-reset(1) Manual Page: git-reset - Reset current HEAD to the specified state")
    assert section_text("25.1. Routine Vacuuming",
                        ["25.1. Routine Vacuuming", "25.1.2. Recovering Disk Space"],
                        DOCBOOK_CHUNK) == (
        "25.1. Routine Vacuuming > 25.1.2. Recovering Disk Space: In PostgreSQL, an UPDATE "
        "or DELETE of a row does not immediately remove the old version of the row.")
    # a page whose title differs from its heading keeps both
    assert section_text("Logging", ["Injecting Request Information"], "") == (
        "Logging > Injecting Request Information")


def test_lead_sentence_is_bounded_and_skips_code() -> None:
    assert lead_sentence("```\nls -l\n```\n\nLists files.") == "Lists files."
    long = "word " * 200
    assert len(lead_sentence(long)) <= 240 and lead_sentence(long).endswith("word")
    assert starts_section(SPHINX_CHUNK) and not starts_section("A continued paragraph.")


def test_spec_names_chunk_and_section_models() -> None:
    assert split_spec("wordllama+minilm:32") == ("wordllama", "minilm:32")
    assert split_spec("wordllama") == ("wordllama", None)
    assert load_section_embedder("wordllama") is None
    with pytest.raises(EmbedderError, match="section vectors need chunk vectors"):
        load_section_embedder("none+minilm")
    with pytest.raises(EmbedderError, match="unknown embedder 'nosuch'"):
        load_section_embedder("wordllama+nosuch")


@needs_minilm
def test_section_model_defaults_to_48_tokens(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("wordllama")
    monkeypatch.setenv("DOCSCRAWL_CACHE", str(tmp_path))
    sections = load_section_embedder("wordllama+minilm")
    chunks = load_embedder("wordllama+minilm")
    assert sections is not None and sections.key.startswith("minilm-48")
    assert chunks is not None and chunks.key == "wordllama"



def _section_vectors(index: SearchIndex) -> dict[str, np.ndarray]:
    """Section key -> its row of `search.sections.npy` (float32 holding float16 values)."""
    matrix = np.load(index.vector_files()["sections"])
    assert matrix.dtype == np.float32
    assert np.array_equal(matrix.astype(np.float16).astype(np.float32), matrix)
    return {key: matrix[row] for key, row in index.db.execute("SELECT section_key, row "
                                                             "FROM sections")}


def _sections_held(index: SearchIndex) -> int:
    return int(index.db.execute(
        "SELECT count(DISTINCT section_key) FROM chunk_pages").fetchone()[0])


@pytest.mark.e2e
@needs_minilm
def test_update_embeds_only_changed_sections(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("wordllama")
    monkeypatch.setenv("DOCSCRAWL_CACHE", str(tmp_path / "cache"))
    site = tmp_path / "site"
    shutil.copytree(SITES / "demo", site)
    out = tmp_path / "out"
    with StaticSite(site) as server:
        seed = f"{server.url}/docs/"
        crawl(seed, out)
        index = SearchIndex.open(out, embedder="wordllama+minilm", update=False)
        index.sections = counting = Counting(index.sections, progress_every=2)
        built = index.refresh()
        # one text per section, not per chunk; every chunk maps to its section's row
        assert built.full and len(counting.texts) == _sections_held(index) > 2
        assert len(set(counting.texts)) == len(counting.texts)
        # a progress line each time `progress_every` more sections are embedded
        assert re.search(r"out: [\d,]+ sections embedded \(minilm\)", capsys.readouterr().err)
        files = {name: np.load(path) for name, path in index.vector_files().items()}
        assert files["sections"].shape == (len(counting.texts) + 1, 384)
        assert len(files["chunksec"]) == len(files["rowids"]) == index.count()
        assert (files["chunksec"] < len(counting.texts)).all()
        vectors = _section_vectors(index)
        counting.texts.clear()
        assert index.refresh().added == 0 and counting.texts == []
        page = site / "docs" / "guide" / "index.html"
        before = page.read_text(encoding="utf-8")
        assert "<p>" in before
        page.write_text(before.replace("<p>", "<p>Quokkas maintain this guide. ", 1),
                        encoding="utf-8")
        later = time.time() + 10
        os.utime(page, (later, later))
        crawl(seed, out)
        built = index.refresh()
        assert 1 <= built.added <= 3
        assert counting.texts and len(counting.texts) <= built.added
        assert any("Quokkas maintain this guide." in text for text in counting.texts)
        rows = int(index.db.execute("SELECT count(*) FROM sections").fetchone()[0])
        assert rows == _sections_held(index)  # the replaced chunks' sections are not kept twice
        # the vector file is the sections' only copy (no vector in the table): an update
        # carries each unchanged section's row over, bit for bit
        columns = [r[1] for r in index.db.execute("PRAGMA table_info(sections)")]
        assert columns == ["section_key", "sig", "row"]
        after = _section_vectors(index)
        common = [key for key in after if key in vectors]
        same = sum(np.array_equal(after[key], vectors[key]) for key in common)
        assert same >= len(common) - len(counting.texts) and same > 0
        hits = Searcher(index).search("who looks after the guide?", k=3).hits
        assert hits
        index.close()


GIT_DOC = Path("/usr/share/doc/git-doc")
GIT_PAGES = 70          # git.html and the porcelain commands it lists first
# A question in a developer's words: git-cherry-pick's title names the command, its summary
# says "Apply the changes introduced by some existing commits". wordllama's chunk vectors
# and bm25 rank it 5th (another branch's pages win on "branch"; before the heading match
# was scaled by the headings' length, not in the first five); a MiniLM vector of the
# page's sections ranks it higher.
BRIDGE = ("apply one commit from another branch", "git-cherry-pick.html")


# An exact question: it names git-commit's option. The section vectors of pages about
# replacing and switching branches are close to its words; at the section weight of
# questions in words they push git-commit out of the first five (docs/search.md, Section
# vectors: fusion).
EXACT = ("--amend replace the tip of the current branch", "git-commit.html")
needs_git_doc = pytest.mark.skipif(not (GIT_DOC / BRIDGE[1]).exists(),
                                   reason="git-doc not installed")


@pytest.fixture(scope="module")
def git_crawl(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("git") / "out"
    with StaticSite(GIT_DOC) as server:
        crawl(f"{server.url}/git.html", out, "render=never", f"max_pages={GIT_PAGES}")
    return out


def _pages(index: SearchIndex, question: str) -> list[str]:
    return [h.meta["canonical_url"].rsplit("/", 1)[-1]
            for h in Searcher(index).search(question, k=5).hits]


@pytest.mark.e2e
@needs_minilm
@needs_git_doc
def test_section_vectors_find_a_page_the_chunk_vectors_miss(
        git_crawl: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("wordllama")
    monkeypatch.setenv("DOCSCRAWL_CACHE", str(git_crawl.parent / "cache"))
    question, page = BRIDGE
    found = {}
    for spec in ("wordllama+minilm", "wordllama"):
        index = SearchIndex.open(git_crawl, embedder=spec)
        found[spec] = _pages(index, question)
        index.close()
    rank = {spec: urls.index(page) if page in urls else len(urls)
            for spec, urls in found.items()}
    assert rank["wordllama+minilm"] < rank["wordllama"], found


@pytest.mark.e2e
@needs_minilm
@needs_git_doc
def test_a_question_naming_an_option_is_not_pulled_by_section_vectors(
        git_crawl: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Section vectors weigh SECTION_WEIGHT_EXACT (0) in a question that names an
    identifier or option: at the weight of a question in words its page falls out."""
    pytest.importorskip("wordllama")
    monkeypatch.setenv("DOCSCRAWL_CACHE", str(git_crawl.parent / "cache"))
    question, page = EXACT
    index = SearchIndex.open(git_crawl, embedder="wordllama+minilm")
    assert index.sections is not None
    assert page in _pages(index, question)[:2]
    monkeypatch.setattr(rank_module, "SECTION_WEIGHT_EXACT", rank_module.SECTION_WEIGHT)
    assert page not in _pages(index, question)
    index.close()


FLASK_DOC = Path("/usr/share/doc/python-flask-doc/html")
FLASK_PAGES = ("genindex.html", "config.html", "cli.html")


@pytest.mark.e2e
@needs_minilm
@pytest.mark.skipif(not all((FLASK_DOC / p).exists() for p in FLASK_PAGES),
                    reason="python-flask-doc not installed")
def test_back_of_book_index_sections_are_not_embedded(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A genindex's sections are never answers (ranking drops them): none of their texts
    is embedded, and their chunks read the zero row; every other section has its vector."""
    pytest.importorskip("wordllama")
    monkeypatch.setenv("DOCSCRAWL_CACHE", str(tmp_path / "cache"))
    site = tmp_path / "site"
    site.mkdir()
    for page in FLASK_PAGES:
        shutil.copy(FLASK_DOC / page, site / page)
    out = tmp_path / "out"
    with StaticSite(site) as server:
        crawl(f"{server.url}/genindex.html", out, "render=never")
    index = SearchIndex.open(out, embedder="wordllama+minilm", update=False)
    index.sections = counting = Counting(index.sections)
    index.refresh()
    regions = dict(index.db.execute(
        "SELECT section_key, max(region) FROM chunk_pages GROUP BY section_key").fetchall())
    answers = [key for key, region in regions.items() if region != "site_index"]
    assert len(answers) < len(regions) and answers
    assert len(counting.texts) == len(answers)
    assert not [text for text in counting.texts if text.startswith("Index")]
    files = {name: np.load(path) for name, path in index.vector_files().items()}
    keys = [key for (key,) in
            index.db.execute("SELECT section_key FROM chunk_pages ORDER BY rowid")]
    zero = len(files["sections"]) - 1
    for key, row in zip(keys, files["chunksec"].tolist(), strict=True):
        assert (row == zero) == (regions[key] == "site_index")
    index.close()


@needs_minilm
def test_a_pages_sections_are_ordered_with_their_section_cosines(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The search hands each candidate's section cosine to `structure.siblings_by_section`
    for a question in words, and none for an exact one (whose section list is not run)."""
    pytest.importorskip("wordllama")
    from docscrawl.search import structure
    from tests.search.test_ranking import chunk, page, write_output

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
    seen: list[dict[int, float] | None] = []
    real = structure.siblings_by_section

    def spy(ranked: list[structure.Ranked],
            cosines: dict[int, float] | None) -> list[structure.Ranked]:
        seen.append(cosines)
        return real(ranked, cosines)

    monkeypatch.setattr(structure, "siblings_by_section", spy)
    searcher = Searcher(SearchIndex.open(out, embedder="wordllama+minilm"))
    hits = searcher.search("what value does a variable have before it is assigned").hits
    assert {h.record["id"] for h in hits} == {"sha256:spec.html:Variables",
                                              "sha256:spec.html:The zero value"}
    assert seen[-1] is not None and len(seen[-1]) == 2
    searcher.search("variable.value before it is assigned")
    assert not seen[-1]
