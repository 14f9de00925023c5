"""What the index stores per chunk: site title affixes left out, long bodies as windows,
and the default version's aliases read from where pages were seen."""

from __future__ import annotations

from pathlib import Path

import pytest

from docscrawl.search import Searcher, SearchIndex
from docscrawl.search.fields import (
    CHUNK_OF_SQL,
    MAX_WINDOWS,
    WINDOW_CHARS,
    WINDOWS_BASE,
    SiteAffixes,
    chunk_of,
    chunks_rows_filter,
    fts_rowid,
    windows,
)
from docscrawl.search.versions import default_aliases, unversioned
from tests.search.test_ranking import SITE, chunk, page, write_output


@pytest.mark.parametrize(("titles", "page_title", "expected"), [
    # Sphinx: "Page — Project documentation"
    (["Jobs — Scrapy 2.8 documentation", "Spiders — Scrapy 2.8 documentation",
      "Items — Scrapy 2.8 documentation", "Settings — Scrapy 2.8 documentation",
      "Scrapy 2.8 documentation"], "Jobs — Scrapy 2.8 documentation", "Jobs"),
    # MkDocs: "Page - Site"
    (["Home - MkDocs", "Configuration - MkDocs", "Themes - MkDocs", "Deploying - MkDocs",
      "Plugins - MkDocs"], "Configuration - MkDocs", "Configuration"),
    # pipes, and a site name first
    (["Acme | Install", "Acme | Configure", "Acme | API", "Acme | FAQ", "Acme | Cookbook"],
     "Acme | FAQ", "FAQ"),
    # no shared segment: titles kept whole
    (["git-commit(1) Manual Page", "git-log(1) Manual Page", "git-add(1) Manual Page",
      "git-rm(1) Manual Page", "git-mv(1) Manual Page"], "git-log(1) Manual Page",
     "git-log(1) Manual Page"),
])
def test_site_affixes_learned_from_titles(titles: list[str], page_title: str,
                                          expected: str) -> None:
    assert SiteAffixes.learn(titles).without(page_title) == expected


def test_a_title_that_is_only_the_site_name_stays() -> None:
    affixes = SiteAffixes.learn([f"Page {i} — Acme docs" for i in range(6)])
    assert affixes.without("Acme docs") == "Acme docs"
    assert SiteAffixes.learn(["A — B", "C — B"]).without("A — B") == "A — B"  # too few pages


def test_windows_cut_long_bodies_at_line_ends_and_keep_every_character() -> None:
    short = "one line\n" * 10
    assert windows(short) == [short]
    body = "".join(f"option --flag-{i}  does thing number {i} to the tree\n" for i in range(400))
    parts = windows(body)
    assert len(parts) > 5 and "".join(parts) == body
    assert all(len(part) <= WINDOW_CHARS + 60 for part in parts)
    assert all(part.endswith("\n") for part in parts)
    one_line = "word " * 200_000  # a single huge line is cut at spaces
    cut = windows(one_line)
    assert len(cut) == MAX_WINDOWS and "".join(cut) == one_line


def test_a_passage_deep_in_a_long_chunk_is_found(tmp_path: Path) -> None:
    """An option list in one long chunk: the option asked about is near its end."""
    options = "".join(f"`--opt{i}`\n: Sets the {i}th knob of the frobnicator engine.\n\n"
                      for i in range(300))
    options += "`--amend`\n: Replace the tip of the current branch by creating a new one.\n"
    pages = [page("commit.html", "commit", None)]
    chunks = [chunk("commit.html", "commit", options, None, heading_path=["commit", "OPTIONS"])]
    for i, name in enumerate(("reset", "switch", "rebase", "merge", "stash", "tag")):
        pages.append(page(f"{name}.html", name, None))
        chunks.append(chunk(f"{name}.html", name, f"`{name}` moves the tip of the current "
                            "branch." if i % 2 else f"`{name}` can replace the current "
                            "branch.", None))
    write_output(tmp_path, pages, chunks)
    searcher = Searcher(SearchIndex.open(tmp_path, embedder="none"))
    hits = searcher.search("replace the tip of the current branch", k=3).hits
    assert hits[0].meta["canonical_url"] == SITE + "commit.html"


def test_a_chunks_first_window_has_its_rowid_and_every_window_maps_back(
        tmp_path: Path) -> None:
    """Dense FTS rowids (schema 16): one-window chunks are consecutive rows; a long
    chunk's later windows map back to it, and the filter of a chunk's rows holds them."""
    for rowid in (1, 2, 3_000, 2**40):
        assert [chunk_of(fts_rowid(rowid, w)) for w in range(MAX_WINDOWS)] == \
            [rowid] * MAX_WINDOWS and fts_rowid(rowid, 0) == rowid
    text = "".join(f"Line {i} about the frobnicator engine.\n" for i in range(400))
    pages = [page("long.html", "long", None), page("short.html", "short", None)]
    chunks = [chunk("long.html", "long", text + "The zyxquat knob.\n", None),
              chunk("short.html", "short", "The frobnicator, briefly.", None)]
    write_output(tmp_path, pages, chunks)
    index = SearchIndex.open(tmp_path, embedder="none")
    try:
        db = index.db
        rowids = [r for (r,) in db.execute("SELECT rowid FROM chunks ORDER BY rowid")]
        fts = sorted(r for (r,) in db.execute("SELECT rowid FROM fts WHERE fts MATCH 'engine'"))
        assert len(fts) > 2 and fts[0] in rowids and all(r > WINDOWS_BASE for r in fts[1:])
        (late,) = [r for (r,) in db.execute("SELECT rowid FROM fts WHERE fts MATCH 'zyxquat'")]
        assert late > WINDOWS_BASE and chunk_of(late) == fts[0]
        for chosen in ([fts[0]], [r for r in rowids if r != fts[0]]):
            condition, bounds = chunks_rows_filter(chosen)
            found = {r for (r,) in db.execute(
                f"SELECT DISTINCT {CHUNK_OF_SQL} FROM fts WHERE fts MATCH 'frobnicator' "
                f"AND ({condition})", bounds)}
            assert found == set(chosen)
    finally:
        index.close()


def test_default_aliases_from_where_pages_were_seen() -> None:
    root = "http://d.test/docs/"
    pages = [("2.0", [root + f"guide/p{i}.html"]) for i in range(5)]
    pages += [("latest", [root + "guide/install.html", root + "latest/guide/install.html"]),
              ("3.6", [root + "3.6/guide/install.html"]),
              ("3.6", [root + "3.6/guide/p1.html"])]
    assert default_aliases(pages, "2.0") == {"latest"}
    assert default_aliases(pages, None) == set()
    # the same copy kept under the default's label: its URLs still name the alias
    relabelled = [("2.0" if v == "latest" else v, urls) for v, urls in pages]
    assert default_aliases(relabelled, "2.0") == {"latest"}
    # a version with pages of its own is not an alias for one copy it shares
    own = relabelled + [("latest", [root + f"latest/only/p{i}.html"]) for i in range(3)]
    assert default_aliases(own, "2.0") == set()


def test_unversioned_drops_version_segments_only() -> None:
    versions = ["2.0", "3.6", "latest", "v3.25"]
    assert (unversioned("http://d.test/docs/3.6/guide/x.html#a", versions)
            == "http://d.test/docs/guide/x.html#a")
    assert (unversioned("http://d.test/cmake/help/v3.25/x.html", versions)
            == "http://d.test/cmake/help/x.html")
    assert unversioned("http://d.test/docs/guide/latest-news.html", versions).endswith(
        "/docs/guide/latest-news.html")


def test_a_listing_yields_to_prose_for_a_prose_question(tmp_path: Path) -> None:
    """A source view (all code) that scores above the guide explaining the same words
    (it is longer on them and its title matches too): for a prose question the guide
    comes first, for an identifier the listing keeps its rank. Plain words joined by a
    hyphen ("time-out") are prose, not an identifier (`tokenize.names_identifier`)."""
    listing = ("```python\n" + "".join(f"def retry_request_later_{i}(request, delay):\n"
                                       f"    # retry the request later after a delay\n"
                                       f"    return schedule(request, delay)\n"
                                       for i in range(1)) + "```\n")
    guide = ("To retry a failed request later, raise the exception and the scheduler "
             "waits for a delay before it runs the request again.")
    pages = [page("_modules/retry.html", "Source code for retry", None),
             page("guide.html", "Retrying", None)]
    chunks = [chunk("_modules/retry.html", "Source code for retry", listing, None,
                    has_code=True),
              chunk("guide.html", "Retrying", guide, None)]
    write_output(tmp_path, pages, chunks)
    searcher = Searcher(SearchIndex.open(tmp_path, embedder="none"))
    prose = searcher.search("retry a request later after a delay", k=2).hits
    assert prose[0].meta["canonical_url"] == SITE + "guide.html"
    joined = searcher.search("retry a request later after a time-out delay", k=2).hits
    assert joined[0].meta["canonical_url"] == SITE + "guide.html"
    ident = searcher.search("retry_request_later_3", k=2).hits
    assert ident[0].meta["canonical_url"] == SITE + "_modules/retry.html"
