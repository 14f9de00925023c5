"""The graph's row of one link (`linkrows.link_row`): its score and fields as the rule
gives them, and values the inbound links can write as plain JSON."""

from __future__ import annotations

from typing import Any

import pytest

from docscrawl.export.linkrows import CONTAINER_WEIGHT, REGION_WEIGHT, link_row
from docscrawl.jsonenc import dumps_value

LINKS: list[dict[str, Any]] = [
    {"target": "internal", "url": "https://d.example/a.html#x", "text": "  Read   more ",
     "region": "main_content", "container": "paragraph", "container_label": "Intro"},
    {"target": "internal", "url": "https://d.example/b.html", "text": "\u2003\n",
     "region": "sidebar_navigation", "container": "list_item", "container_label": None},
    {"target": "internal", "url": "https://d.example/c d.html#y", "text": 7,
     "region": None, "container": None},
    {"target": "internal", "url": "https://d.example/q?x=1#frag", "text": "Q",
     "region": 1.5, "container": ["odd"], "container_label": 2.25},
    {"target": "internal", "url": "", "text": "", "region": True, "container": "heading",
     "container_label": 0},
]


def _score_by_rule(link: dict[str, Any]) -> float:
    """The score's rule written out as it was before `link_row` read each field once."""
    score = REGION_WEIGHT.get(str(link.get("region")), 1.0)
    score *= CONTAINER_WEIGHT.get(str(link.get("container")), 0.5)
    text = str(link.get("text") or "").strip()
    return score + (0.1 if link.get("container_label") else 0.0) + (0.05 if text else -1.0)


@pytest.mark.parametrize("link", LINKS)
def test_a_links_row_follows_the_rule(link: dict[str, Any]) -> None:
    row = link_row(link)
    assert row is not None
    assert row[2] == " ".join(str(link.get("text") or "").split())
    assert row[3] == _score_by_rule(link)


def test_labels_and_regions_are_strings_integers_or_null() -> None:
    """A float or a list where a string belongs is kept as its text, so an inbound link
    holds no float: orjson and the stdlib write it alike (`dumps_value(plain=True)`)."""
    rows = [link_row(link) for link in LINKS]
    assert [(row[4], row[5]) for row in rows if row] == [
        ("Intro", "main_content"), (None, "sidebar_navigation"), (None, None),
        ("2.25", "1.5"), (0, True)]
    items = [{"url": row[0], "anchor_text": row[2], "container_label": row[4],
              "region": row[5]} for row in rows if row]
    assert dumps_value(items, plain=True) == dumps_value(items)


def test_external_links_and_non_links_have_no_row() -> None:
    assert link_row({"target": "external", "url": "https://x.example/"}) is None
    assert link_row("https://d.example/a.html") is None
    assert link_row(None) is None
