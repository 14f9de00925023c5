"""Reranking rules measured on the tune and old question sets (docs/search.md, ranking
step 3), each on chunks shaped as the generators write them."""

from __future__ import annotations

from pathlib import Path

import pytest

from docscrawl.search import Searcher, SearchIndex, structure
from tests.search.test_ranking import SITE, chunk, page, write_output


def _manual_and_faq(out: Path) -> None:
    """Texinfo's R manuals: a FAQ entry whose heading is a long question, and the manual's
    section with a short heading; both hold words of the question, the manual's body more."""
    pages = [page("R-FAQ.html", "R FAQ", None), page("R-intro.html", "An Introduction to R", None)]
    chunks = [
        chunk("R-FAQ.html", "R FAQ", "Use arrows() with a tiny arrow head to draw error bars "
              "on an existing graph, or polygon() for a confidence band.", version=None,
              heading_path=["R FAQ", "7 R Miscellanea", "7.38 How can I put error bars or "
                            "confidence bands on my plot?"],
              anchor="How-can-I-put-error-bars-or-confidence-bands-on-my-plot_003f"),
        chunk("R-intro.html", "An Introduction to R", "R allows you to create an n by m array "
              "of figures on a single page, each with its own margins. Set par(mfrow=c(3,2)) "
              "to put several plots next to each other, by rows.",
              version=None, heading_path=["An Introduction to R", "12 Graphical procedures",
                                          "12.5.4 Multiple figure environment"],
              anchor="Multiple-figure-environment"),
        *[chunk("R-intro.html", "An Introduction to R", f"Filler text {i} about vectors.",
                version=None, heading_path=["An Introduction to R", f"{i} Vectors {i}"],
                anchor=f"filler-{i}") for i in range(8)],
    ]
    write_output(out, pages, chunks)


@pytest.mark.parametrize(("heading_terms", "first"), [
    (structure.HEADING_TERMS, "R-intro.html#Multiple-figure-environment"),
    (10**6, "R-FAQ.html#How-can-I-put-error-bars-or-confidence-bands-on-my-plot_003f")])
def test_a_long_heading_holding_a_query_word_counts_for_less(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, heading_terms: int, first: str) -> None:
    """`structure.heading_share`: the FAQ's question heading holds "plot" among its 18
    terms; scaled by its length it no longer outranks the manual's section, whose body
    answers (unscaled, HEADING_TERMS 10**6: the FAQ entry came first)."""
    monkeypatch.setattr(structure, "HEADING_TERMS", heading_terms)
    _manual_and_faq(tmp_path)
    result = Searcher(SearchIndex.open(tmp_path, embedder="none")).search(
        "several plots next to each other in one window", k=3)
    assert result.hits[0].url() == SITE + first


def test_heading_share_is_full_for_a_short_heading_and_scaled_for_a_long_one() -> None:
    wanted = {"plot": 2.0, "window": 1.0}
    assert structure.heading_share(wanted, 3.0, {"plot", "window"}) == 1.0
    long = {"plot", *[f"w{i}" for i in range(23)]}  # 24 terms: sqrt(6 / 24) = 0.5
    assert structure.heading_share(wanted, 3.0, long) == pytest.approx(2.0 / 3.0 * 0.5)


def _overloads(out: Path) -> None:
    """Javadoc's method details: four overloads of `random`, each its own anchor under the
    same heading, and the method that answers under a heading of its own."""
    title = "RandomStringUtils"
    pages = [page("RandomStringUtils.html", title, None), page("other.html", "Other", None)]
    overloads = ["random(int,boolean,boolean)", "random(int,int,int,boolean,boolean)",
                 "random(int,char...)", "random(int,java.lang.String)"]
    chunks = [
        *[{**chunk("RandomStringUtils.html", title, f"Creates a random string of the given "
                   f"count of characters, letters or digits as the flags say ({i}).",
                   version=None, heading_path=[title, "Method Details", "random"],
                   anchor=anchor), "id": f"sha256:{anchor}"}
          for i, anchor in enumerate(overloads)],
        chunk("RandomStringUtils.html", title, "Creates a string whose characters are "
              "chosen from the set of alphanumeric characters: letters and digits.",
              version=None, heading_path=[title, "Method Details", "randomAlphanumeric"],
              anchor="randomAlphanumeric(int)"),
        *[chunk("other.html", "Other", f"Unrelated text {i} about files.", version=None,
                heading_path=["Other", f"Part {i}"], anchor=f"part-{i}") for i in range(8)],
    ]
    write_output(out, pages, chunks)


def _urls(out: Path, question: str, *, k: int) -> list[str]:
    """The result URLs of a lexical search of the output in `out`."""
    result = Searcher(SearchIndex.open(out, embedder="none")).search(question, k=k)
    return [hit.url() for hit in result.hits]


@pytest.mark.parametrize("repeats_last", [True, False])
def test_overloads_after_the_first_leave_room_for_other_sections(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, repeats_last: bool) -> None:
    """`structure.structural`: the overloads of `random` after the first go last, so the
    method whose heading differs is in the top three (without the rule, REPEATS_LAST
    False, the overloads held the top four)."""
    monkeypatch.setattr(structure, "REPEATS_LAST", repeats_last)
    _overloads(tmp_path)
    urls = _urls(tmp_path, "generate a random token of letters and digits", k=5)
    assert urls[0].startswith(SITE + "RandomStringUtils.html#random(")
    found = SITE + "RandomStringUtils.html#randomAlphanumeric(int)" in urls[:3]
    assert found is repeats_last
    assert len(urls) == 5  # the overloads are still listed, after it


def _one_page_floods(out: Path) -> None:
    """A dialect's page whose every section says "psycopg2 connection", and the FAQ entry
    that answers, which says it once."""
    pages = [page("postgresql.html", "PostgreSQL", None), page("faq.html", "FAQ", None)]
    chunks = [
        *[chunk("postgresql.html", "PostgreSQL", f"The psycopg2 connection accepts {topic}; "
                "psycopg2 passes it to the connection.", version=None,
                heading_path=["PostgreSQL", "psycopg2", f"psycopg2 {topic}"], anchor=topic)
          for topic in ("ssl", "isolation", "arguments", "unicode", "notices", "hstore")],
        chunk("faq.html", "FAQ", "The engine hands out the raw DBAPI connection of the "
              "driver, such as a psycopg2 connection object.", version=None,
              heading_path=["FAQ", "Connections", "Getting at the raw DBAPI connection"],
              anchor="raw"),
        *[chunk("faq.html", "FAQ", f"Unrelated answer {i} about files.", version=None,
                heading_path=["FAQ", f"Files {i}"], anchor=f"files-{i}") for i in range(8)],
    ]
    write_output(out, pages, chunks)


@pytest.mark.parametrize(("share", "faq_in_top5"), [(structure.PAGE_SHARE, True), (0, False)])
def test_the_first_five_results_are_never_one_pages(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, share: int, faq_in_top5: bool) -> None:
    """`structure._page_share`: the dialect page's fifth and sixth sections go after the
    FAQ's, which is fifth (PAGE_SHARE 0, the rule off: the dialect page held all five)."""
    monkeypatch.setattr(structure, "PAGE_SHARE", share)
    _one_page_floods(tmp_path)
    urls = _urls(tmp_path, "psycopg2 connection", k=8)
    assert urls[0].startswith(SITE + "postgresql.html#")
    assert (SITE + "faq.html#raw" in urls[:5]) is faq_in_top5
    assert sum(url.startswith(SITE + "postgresql.html#") for url in urls) == 6


def _changelog_and_recipe(out: Path) -> None:
    """SQLAlchemy's changelog entries, each under a release number, that name the
    question's words in passing, and the recipe page that answers in fewer of them."""
    pages = [page("changelog_09.html", "0.9 Changelog", None),
             page("custom_types.html", "Custom Types", None)]
    chunks = [
        *[{**chunk("changelog_09.html", "0.9 Changelog", f"The UUID type stores in one "
                   f"column on postgresql ({n}).", version=None,
                   heading_path=["0.9 Changelog", f"0.9.{n}", "postgresql"],
                   anchor=f"change-0.9.{n}-postgresql"), "id": f"sha256:0.9.{n}"}
          for n in range(3)],
        chunk("custom_types.html", "Custom Types", "A GUID type: postgresql's UUID type, and "
              "CHAR(32) on sqlite.", version=None,
              heading_path=["Custom Types", "TypeDecorator Recipes", "Backend-agnostic GUID"],
              anchor="backend-agnostic-guid-type"),
        *[chunk("custom_types.html", "Custom Types", f"Unrelated recipe {i} about files.",
                version=None, heading_path=["Custom Types", f"Recipe {i}"],
                anchor=f"recipe-{i}") for i in range(8)],
    ]
    write_output(out, pages, chunks)


@pytest.mark.parametrize(("factor", "recipe_first"), [(structure.RELEASE_HISTORY, True),
                                                      (1.0, False)])
def test_release_history_entries_go_below_what_they_changed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, factor: float,
        recipe_first: bool) -> None:
    """`structure.release_history`: the changelog's entries (a release number under
    "Changelog") go below the recipe for a question naming no release (RELEASE_HISTORY
    1.0, the rule off: the three entries came first); a question naming a release keeps
    them where their words put them."""
    monkeypatch.setattr(structure, "RELEASE_HISTORY", factor)
    _changelog_and_recipe(tmp_path)
    urls = _urls(tmp_path, "store UUID in one column on both postgresql and sqlite", k=4)
    assert (urls[0] == SITE + "custom_types.html#backend-agnostic-guid-type") is recipe_first
    named = _urls(tmp_path, "UUID column postgresql sqlite fixed in 0.9.1", k=4)
    assert named[0].startswith(SITE + "changelog_09.html#")


def test_a_release_history_needs_a_release_number_and_its_words() -> None:
    assert structure.release_history({"0.9", "0.9.10", "changelog", "sql"})
    assert structure.release_history({"1.80", "boost", "not", "releas"})
    assert not structure.release_history({"5.7.3", "rts", "option"})  # a numbered section
    assert not structure.release_history({"changelog", "format"})  # about changelogs
    assert structure.release_history({"0.9.1"}, either=True)  # a query naming one


@pytest.mark.parametrize(("query", "exact"), [
    ("check that user-typed text is not null, empty or just spaces", False),
    ("predict a yes/no outcome from a few predictors", False),
    ("grow an int sequence without zero-filling the new elements", False),
    ("taking a child out of parent.children should remove that row", True),
    ("handle --verbose and --output=FILE flags", True),
    ("enable my item pipeline with ITEM_PIPELINES", True),
    ("SQLAlchemy 1.4.46: app got much slower after upgrading", True)])
def test_words_joined_by_a_hyphen_or_slash_are_no_identifier(query: str, exact: bool) -> None:
    """`Searcher._section_weight`: a question naming an identifier leaves the section
    vectors out; "user-typed" or "yes/no" are the asker's words, and with them read as
    identifiers the tune set's Boost question on zero-filling lost its page (9th, 1st
    with the section vectors: docs/search.md, ranking step 9)."""
    from docscrawl.search.sections import SECTION_WEIGHT, SECTION_WEIGHT_EXACT
    from docscrawl.search.tokenize import query_terms

    weight = Searcher._section_weight(query, query_terms(query))
    assert weight == (SECTION_WEIGHT_EXACT if exact else SECTION_WEIGHT)


@pytest.mark.parametrize(("weight", "moved"), [(structure.SIBLING_COSINE, True), (0.0, False)])
def test_a_pages_sections_fill_its_places_by_their_section_cosine(
        monkeypatch: pytest.MonkeyPatch, weight: float, moved: bool) -> None:
    """`structure.siblings_by_section`: Go's spec (one page) holds places 1 and 3; its
    "Variables" section shares more words with "what value does a variable have before
    it is assigned", but "The zero value"'s section vector is nearer the question, so it
    takes the page's first place. The places and their scores stay the page's: the other
    page keeps place 2 (with weight 0, the order is the fused one)."""
    monkeypatch.setattr(structure, "SIBLING_COSINE", weight)
    spec, other = SITE + "spec.html", SITE + "faq.html"
    ranked = [(1.2, 1, spec, []), (1.1, 2, other, []), (1.0, 3, spec, [])]
    cosines = {1: 0.30, 2: 0.50, 3: 0.62}
    got = structure.siblings_by_section(ranked, cosines)
    assert [row[0] for row in got] == [1.2, 1.1, 1.0]
    assert [row[2] for row in got] == [spec, other, spec]
    assert [row[1] for row in got] == ([3, 2, 1] if moved else [1, 2, 3])
    assert structure.siblings_by_section(ranked, None) == ranked
