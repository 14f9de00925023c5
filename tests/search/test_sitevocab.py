"""The site's own vocabulary (`docscrawl.search.sitevocab`) on real crawls of real
generator output read from the installed Debian packages: a Sphinx genindex (Flask), a
DocBook bookindex (PostgreSQL 15), a Texinfo index node (Octave) and a one-page Texinfo
manual ending with its indexes (R-intro). Each mini site is a few of the package's own
files copied as they are; links to the files left out fail, as on a partial crawl."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from docscrawl.demo.server import StaticSite
from docscrawl.search import Searcher, SearchIndex
from docscrawl.search.fields import SITE_INDEX
from docscrawl.search.sitevocab import MAX_CHARS, MAX_TERMS
from docscrawl.search.tokenize import index_text
from tests.conftest import crawl

DOC = Path("/usr/share/doc")
SITES = {
    "sphinx": (DOC / "python-flask-doc/html", "genindex.html",
               ["genindex.html", "config.html", "cli.html"]),
    "docbook": (DOC / "postgresql-doc-15/html", "bookindex.html",
                ["bookindex.html", "routine-vacuuming.html", "sql-do.html", "sql-vacuum.html",
                 "stylesheet.css"]),
    "texinfo": (DOC / "octave/octave.html", "Concept-Index.html",
                ["Concept-Index.html", "Bug-Criteria.html", "Miscellaneous-Techniques.html",
                 "Comma-Separated-Lists.html", "octave.css"]),
    "texinfo-one-page": (DOC / "r-doc-html/manual", "R-intro.html", ["R-intro.html"]),
}


def _copy(name: str, target: Path) -> Path:
    source, _, files = SITES[name]
    if not all((source / f).exists() for f in files):
        pytest.skip(f"{source} is not installed")
    target.mkdir(parents=True)
    for file in files:
        shutil.copy(source / file, target / file)
    return target


def _crawl(site: Path, seed: str, out: Path, port: int = 0) -> int:
    """Crawl the site served on `port` (0: any free one); the port it was served on."""
    with StaticSite(site, port=port) as server:
        crawl(f"{server.url}/{seed}", out, "render=never")
        return server.server_address[1]


@pytest.fixture(scope="session")
def crawled(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    """name -> output directory of a crawl of that mini site."""
    base = tmp_path_factory.mktemp("sitevocab")
    outs = {}
    for name, (_, seed, _) in SITES.items():
        site = _copy(name, base / name / "site")
        _crawl(site, seed, base / name / "out")
        outs[name] = base / name / "out"
    yield outs


def _vocab(index: SearchIndex, page_end: str) -> list[tuple[str, str]]:
    """(section key, vocab text) of each chunk of the page whose URL ends so: the field as
    written, without the encoded compounds `index_text` appends to it."""
    rows = index.db.execute("SELECT section_key, rowid FROM chunk_pages WHERE page_url LIKE ?",
                            (f"%{page_end}",)).fetchall()
    found = []
    for key, rowid in rows:
        stored = index.fts_values(rowid)[1]
        if not stored:  # no row in the vocab table
            continue
        head = stored.rsplit("\n", 1)[0]
        found.append((key, head if "\n" in stored and index_text(head) == stored else stored))
    return found


def _regions(index: SearchIndex, page_end: str) -> set[str]:
    return {r for (r,) in index.db.execute(
        "SELECT region FROM chunk_pages WHERE page_url LIKE ?", (f"%{page_end}",))}


@pytest.mark.parametrize(("name", "index_page", "target", "section", "term"), [
    # Sphinx: "ENV (built-in variable)" -> config.html#ENV, an id inside "Builtin
    # Configuration Values". Only the words a chunk lacks are kept: "ENV" is its text
    ("sphinx", "genindex.html", "config.html", "#builtin-configuration-values",
     "built"),
    # DocBook: the term is the entry's own text, the link's is the target's title; the
    # section is named by the anchor on its wrapper (DocBook puts the id on `div.sect2`)
    ("docbook", "bookindex.html", "routine-vacuuming.html", "#VACUUM-FOR-MULTIXACT-WRAPAROUND",
     "MultiXactId"),
    ("docbook", "bookindex.html", "routine-vacuuming.html", "#AUTOVACUUM",
     "general information"),
    # Texinfo: each entry links to an `index-...` anchor
    ("texinfo", "Concept-Index.html", "Miscellaneous-Techniques.html", "", "COW"),
    # one page: the manual, then its indexes (links into the same page)
    ("texinfo-one-page", "", "R-intro.html", "#Examining-the-distribution-of-a-set-of-data",
     "Empirical CDFs"),
])
def test_index_entries_become_the_target_sections_field(
        crawled: dict[str, Path], name: str, index_page: str, target: str, section: str,
        term: str) -> None:
    index = SearchIndex.open(crawled[name], embedder="none")
    try:
        vocab = _vocab(index, target)
        holding = [key for key, text in vocab if re.search(
            rf"(^|\W){re.escape(term)}(\W|$)", text, re.I)]
        assert holding, (term, vocab)
        assert any(key.endswith(section) or section in key for key in holding), holding
        if index_page:  # the index page is an index, the target is not
            assert _regions(index, index_page) == {SITE_INDEX}
        assert SITE_INDEX not in _regions(index, target) or name == "texinfo-one-page"
        for _, text in vocab:  # capped per chunk
            assert len(text) <= MAX_CHARS
    finally:
        index.close()


def test_one_page_manual_keeps_its_text_and_marks_only_its_indexes(
        crawled: dict[str, Path]) -> None:
    index = SearchIndex.open(crawled["texinfo-one-page"], embedder="none")
    try:
        rows = index.db.execute("SELECT region, rowid FROM chunk_pages").fetchall()
        lines = index.lines([rowid for _, rowid in rows])
        marked = [lines[rowid] for region, rowid in rows if region == SITE_INDEX]
        assert marked and len(marked) < len(rows) / 5
        assert all("index" in line.lower() for line in marked)
    finally:
        index.close()


@pytest.mark.parametrize(("name", "query", "want", "heading"), [
    ("docbook", "anonymous code blocks", "sql-do.html", ""),
    ("docbook", "disk space", "routine-vacuuming.html", "Recovering Disk Space"),
    ("texinfo", "COW", "Miscellaneous-Techniques.html", ""),
    ("sphinx", "environment variable FLASK_ENV", "config.html", "Configuration Handling"),
])
def test_the_entry_finds_its_target_not_the_index(
        crawled: dict[str, Path], name: str, query: str, want: str, heading: str) -> None:
    """An index entry's words find the place it points at; the index page itself, which
    holds them too, is not an answer."""
    searcher = Searcher(SearchIndex.open(crawled[name], embedder="none"))
    hits = searcher.search(query, k=5).hits
    assert hits and want in hits[0].url(), [h.url() for h in hits]
    assert any(heading in h for h in hits[0].meta.get("heading_path") or [""]), hits[0].meta
    for hit in hits:
        assert not re.search(r"genindex|bookindex|Concept-Index", hit.url()), hit.url()


def test_a_page_500_entries_point_at_does_not_win_unrelated_queries(
        tmp_path: Path) -> None:
    """Dilution: the bookindex with every entry but those of two pages pointed at
    sql-vacuum.html. Its chunks hold at most MAX_TERMS entries each, and the two pages
    still win their own entries' queries."""
    site = _copy("docbook", tmp_path / "site")
    page = site / "bookindex.html"
    html = page.read_text(encoding="utf-8")
    keep = ("sql-do.html", "routine-vacuuming.html")
    moved = 0

    def point(match: re.Match[str]) -> str:
        nonlocal moved
        if match.group(1).startswith(keep):
            return match.group(0)
        moved += 1
        return 'class="indexterm" href="sql-vacuum.html"'

    page.write_text(re.sub(r'class="indexterm" href="([^"]+)"', point, html),
                    encoding="utf-8")
    assert moved > 500
    _crawl(site, "bookindex.html", tmp_path / "out")
    index = SearchIndex.open(tmp_path / "out", embedder="none")
    try:
        for _, text in _vocab(index, "sql-vacuum.html"):
            assert len(text.splitlines()) <= MAX_TERMS and len(text) <= MAX_CHARS
        searcher = Searcher(index)
        for query, want in [("anonymous code blocks", "sql-do.html"),
                            ("recovering disk space", "routine-vacuuming.html"),
                            ("transaction ID wraparound", "routine-vacuuming.html")]:
            hits = searcher.search(query, k=3).hits
            assert want in hits[0].url(), (query, [h.url() for h in hits])
    finally:
        index.close()


def test_update_follows_a_changed_index(tmp_path: Path) -> None:
    """A re-crawl where only the index page changed re-indexes the chunks whose
    vocabulary changed (their ids are the same), not the whole index."""
    site = _copy("docbook", tmp_path / "site")
    out = tmp_path / "out"
    port = _crawl(site, "bookindex.html", out)
    index = SearchIndex.open(out, embedder="none")
    assert "inline" not in "\n".join(t for _, t in _vocab(index, "sql-do.html"))
    index.close()
    page = site / "bookindex.html"
    html = page.read_text(encoding="utf-8")
    page.write_text(html.replace("anonymous code blocks, ", "inline procedures, "),
                    encoding="utf-8")
    _crawl(site, "bookindex.html", out, port)
    index = SearchIndex.open(out, embedder="none", update=False)
    built = index.refresh()
    try:
        assert not built.full and built.relinked >= 1, built
        text = "\n".join(t for _, t in _vocab(index, "sql-do.html"))
        assert "inline procedures" in text
    finally:
        index.close()


JAVADOC = DOC / "libcommons-lang3-java/api"
JAVADOC_FILES = ["index-all.html", "org/apache/commons/lang3/BitField.html", "stylesheet.css"]


@pytest.fixture(scope="session")
def javadoc(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A crawl of Javadoc's `index-all.html` (Commons Lang 3) and one class page it links
    to, copied from the installed package. Its entries open with their link, whose
    destination holds parentheses (`BitField.html#clear(int)`), then describe the target
    ("- Method in class ..."); a gtk-doc index reads the same ("g_abort, macro in ...")."""
    if not all((JAVADOC / f).exists() for f in JAVADOC_FILES):
        pytest.skip(f"{JAVADOC} is not installed")
    base = tmp_path_factory.mktemp("javadoc")
    for file in JAVADOC_FILES:
        (base / "site" / file).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(JAVADOC / file, base / "site" / file)
    _crawl(base / "site", "index-all.html", base / "out")
    return base / "out"


def test_a_javadoc_index_is_an_index_and_never_an_answer(javadoc: Path) -> None:
    index = SearchIndex.open(javadoc, embedder="none")
    try:
        assert _regions(index, "index-all.html") == {SITE_INDEX}
        assert SITE_INDEX not in _regions(index, "BitField.html")
        hits = Searcher(index).search("clear the bits of a BitField", k=10).hits
        assert hits and all("index-all" not in hit.url() for hit in hits)
        assert hits[0].url().split("#")[0].endswith("BitField.html")
    finally:
        index.close()


def _sorted_index(n: int) -> list[str]:
    return [f"- [{word} term {i:03d}](page{i}.html#t{i})" for i, word in
            enumerate(f"w{i:03d}" for i in range(n))]


def test_the_same_lines_are_read_as_an_index_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A page whose whole text is under its h1 holds the same lines under () and under
    the h1 (a blank preamble aside): they are tested once, and the verdict is kept."""
    from docscrawl.search import vocabread

    calls: list[int] = []
    real = vocabread.is_index

    def counted(lines: list[str]) -> bool:
        calls.append(len(lines))
        return real(lines)

    monkeypatch.setattr(vocabread, "is_index", counted)
    entries = _sorted_index(40)
    sections = [vocabread.Section((), []), vocabread.Section(("Index",), entries)]
    assert vocabread.index_prefixes(sections) == [()]
    assert calls == [40]
    # unsorted: not an index, under () nor under the h1; still one reading
    calls.clear()
    sections = [vocabread.Section((), []), vocabread.Section(("Index",), entries[::-1])]
    assert vocabread.index_prefixes(sections) == []
    assert calls == [40]


def test_long_unlinked_lines_are_not_the_parent_terms_of_an_index() -> None:
    """Lines without a link count as an index's parent terms only when short (80 letters
    and digits at most, once stripped): 40 linked items among 40 lines of prose are not
    an index; among 40 short parent terms they are."""
    from docscrawl.search.vocabread import is_index

    entries = _sorted_index(40)
    prose = "- " + "this line of prose says much more than any term of an index would " * 2
    padded = "- *a parent term*" + " " * 90     # long only in markup and spaces
    assert not is_index([line for entry in entries for line in (prose, entry)])
    assert is_index([line for entry in entries for line in (padded, entry)])
    assert is_index([line for entry in entries for line in ("- a parent term", entry)])
