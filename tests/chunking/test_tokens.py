"""The documented token approximation."""

from __future__ import annotations

import pytest

from docscrawl.chunking_units import count_tokens, split_table


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("", 0),
        ("   \n\t ", 0),
        ("Rotate keys every 90 days.", 6),  # 5 words + "."
        ("configuration", 2),  # 13 letters: one token per started 8
        ("abcdefgh", 1),
        ("abcdefghi", 2),
        ("snake_case_name", 5),  # snake, _, case, _, name
        ("def f(x):", 6),  # def f ( x ) :
        ("`--grace 7d`", 5),  # ` -- grace 7d `
        ("密钥轮换", 4),  # one per CJK character
        ("Schlüssel rotieren", 3),  # 9 letters -> 2, 8 letters -> 1
        ("| a | b |\n| --- | --- |", 10),  # a run of one symbol is one token
        ("```python", 2),
        ("__init__ ...", 4),
        ("-" * 20, 3),
    ],
)
def test_count_tokens(text: str, tokens: int) -> None:
    assert count_tokens(text) == tokens


@pytest.mark.parametrize(
    ("markdown", "limit", "parts"),
    [
        ("not a table", 5, ["not a table"]),
        ("| h |\n| --- |\n| 1 |", 1, ["| h |\n| --- |\n| 1 |"]),  # one row: nothing to split
        (
            "| h |\n| --- |\n| 1 |\n| 2 |\n| 3 |",
            12,
            ["| h |\n| --- |\n| 1 |\n| 2 |", "| h |\n| --- |\n| 3 |"],
        ),
        (
            "Caption\n\n| h |\n| --- |\n| 1 |\n| 2 |",
            1,
            ["Caption\n\n| h |\n| --- |\n| 1 |", "Caption\n\n| h |\n| --- |\n| 2 |"],
        ),
    ],
)
def test_split_table(markdown: str, limit: int, parts: list[str]) -> None:
    assert split_table(markdown, limit=limit) == parts
