"""`jsonfields.field_at` reads one key of a compact JSON line without parsing the rest: the
reader the link graph (pages.jsonl) and the search index's updates (chunks.jsonl) share."""

from __future__ import annotations

import json

from docscrawl.jsonfields import field, field_at
from docscrawl.jsonl import dumps_line

LINE = dumps_line({"id": "sha256:1", "canonical_url": "https://d.example/a/",
                   "markdown": 'quoted "links": [] inside text', "links": [{"url": "x"}],
                   "inbound_links": [], "n": 0})


def test_a_key_is_decoded_alone_and_its_text_is_where_it_says() -> None:
    value, start, end = field_at(LINE, "links")
    assert value == [{"url": "x"}]
    assert LINE[start:end] == json.dumps([{"url": "x"}], separators=(",", ":"))
    assert field(LINE, "canonical_url") == "https://d.example/a/"
    assert field(LINE, "n") == 0 and field(LINE, "inbound_links") == []


def test_a_key_inside_a_string_is_not_taken_for_the_key() -> None:
    # the crawl's strings escape their quotes, so `"links":` inside text never matches
    assert LINE.index('\\"links\\": []') < LINE.index('"links":')  # the text comes first
    assert field(LINE, "links") == [{"url": "x"}]


def test_an_absent_key_or_a_value_that_does_not_decode_is_none() -> None:
    assert field_at(LINE, "missing") == (None, 0, 0)
    assert field_at('{"links": [1, 2', "links") == (None, 0, 0)
    assert field('{"id": "a",  "n":\t 7}', "n") == 7  # spaces and tabs before a value
