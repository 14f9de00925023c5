"""Code-aware terms: identifiers match whole, and by their parts."""

from __future__ import annotations

import pytest

from docscrawl.search.tokenize import command_like, query_terms, stem, terms


@pytest.mark.parametrize(("text", "whole", "parts"), [
    ("call json.dumps(obj)", "json.dumps", {"json", "dumps"}),
    ("npm install --save-exact", "--save-exact", {"save", "exact"}),
    ("impl Iterator<E> for", "iterator<e>", {"iterator", "e"}),
    ("use std::vector<int>", "std::vector<int>", {"std", "vector", "int"}),
    ("raise HTTPServerError", "httpservererror", {"http", "server", "error"}),
    ("set max_retry_count", "max_retry_count", {"max", "retry", "count"}),
])
def test_identifier_whole_and_parts(text: str, whole: str, parts: set[str]) -> None:
    found = list(terms(text))
    assert whole in found
    assert parts <= set(found)


def test_error_code_and_prose() -> None:
    assert list(terms("SQLSTATE 23505")) == ["sqlstate", "23505"]
    assert query_terms("How do I rotate a credential?") == ["rotate", "credential"]
    assert query_terms("how do I") == ["how", "do", "i"]  # nothing but stopwords: keep all


def test_a_query_searches_a_camelcase_word_whole_unless_the_index_lacks_it() -> None:
    query = "write docs in Markdown instead of reStructuredText"
    assert query_terms(query) == ["write", "docs", "markdown", "instead", "restructuredtext"]
    assert query_terms(query, known=lambda term: term != "restructuredtext")[-4:] == [
        "restructuredtext", "re", "structured", "text"]
    # an identifier with punctuation keeps its parts: the text may write them apart
    assert query_terms("json.dumps indent") == ["json.dumps", "json", "dumps", "indent"]


def test_sentence_punctuation_is_not_part_of_a_term() -> None:
    assert list(terms("It ends here. Next, a list: one")) == [
        "it", "ends", "here", "next", "a", "list", "one"]


@pytest.mark.parametrize(("query", "expected"), [
    ("pip install --upgrade", True), ("scrapy crawl x -o items.json", True),
    ("$ make test", True), ("DEBUG=1 make", True),
    ("how do I configure logging in a spider?", False), ("request timeout", False),
])
def test_command_like(query: str, expected: bool) -> None:
    assert command_like(query) is expected


@pytest.mark.parametrize("family", [
    ["write", "writes", "writing"], ["register", "registers", "registering"],
    ["configure", "configured", "configuration"], ["query", "queries"],
    ["process", "processes", "processing"], ["page", "pages"], ["apply", "applies", "applied"],
])
def test_stem_joins_a_word_family(family: list[str]) -> None:
    assert len({stem(word) for word in family}) == 1


def test_stem_keeps_identifiers_and_short_words() -> None:
    assert [stem(w) for w in ("json.dumps", "use", "cls", "v2")] == ["json.dumps", "use",
                                                                      "cls", "v2"]
